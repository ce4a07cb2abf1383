import type Database from "better-sqlite3";
import { PROMPT_JOIN_MS, type Facts, type LifecycleChange, type LifecycleKind, type Part, type PromptSent, type Unmapped } from "../mapping/changes";
import { addStep, emptyTally, mergePart, modelsFilled, partKey, summarize, type Tally } from "../mapping/fold";
import type { Signal } from "../records";
import { filePositions, keepPositionStatement, type FilePosition } from "./queries/agentFiles";
import { storeBytes } from "./queries/bytes";
import { storeIntake, type IntakeRow } from "./queries/intake";
import { storeUnmapped, type UnmappedPage, type UnmappedRow } from "./queries/unmapped";
import { storeUsage, type Usage } from "./queries/usage";
import { identityOf, isDamage, openStoreFile, setAside } from "./schema";

export interface TelemetryStoreOptions {
  /** Lifecycles not heard of for this long are removed (`trim`). */
  keepMs: number;
  /** And the oldest go while the store is bigger than this. */
  maxBytes: number;
}

/** One export, as the pipeline hands it to the store: its changes mapped and redacted, and what mapped to nothing. */
interface ExportBatch {
  signal: Signal;
  /** Records decoded, and rejected by the decoder. */
  records: number;
  rejected: number;
  changes: readonly LifecycleChange[];
  unmapped: readonly Unmapped[];
}

/** What lines of an agent's file told (lib/telemetry/agentFiles), mapped and redacted, and how far the file was read. */
interface FileBatch {
  changes: readonly LifecycleChange[];
  position: FilePosition;
}

/** The statements an export runs, prepared once: preparing is most of a small statement's cost. */
function statements(db: Database.Database) {
  return {
    seqOfKey: db.prepare("SELECT seq FROM lifecycle_keys WHERE key = ?").pluck(),
    insertLifecycle: db.prepare(
      `INSERT INTO lifecycles (kind, service, session, trace_id, state, started_at, first_at, last_at, received_at, last_step, calls, tools, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd)
       VALUES (?, ?, ?, ?, 'created', ?, ?, ?, ?, '', 0, 0, 0, 0, 0, 0, 0)`,
    ),
    addKey: db.prepare("INSERT OR IGNORE INTO lifecycle_keys (key, seq) VALUES (?, ?)"),
    // `awaits:<parent key>:<child key>`: the lifecycles waiting for their parent, a range of the key's primary key.
    awaiting: db.prepare("SELECT key, seq FROM lifecycle_keys WHERE key >= ? AND key < ?"),
    removeKey: db.prepare("DELETE FROM lifecycle_keys WHERE key = ?"),
    // `sent:<session>:<intake>:<time>`: the prompts each intake told, a range of the key's primary key by their time.
    promptsSent: db.prepare("SELECT key, seq FROM lifecycle_keys WHERE key >= ? AND key <= ?"),
    hasKeyIn: db.prepare("SELECT 1 FROM lifecycle_keys WHERE seq = ? AND key >= ? AND key < ? LIMIT 1").pluck(),
    setSession: db.prepare(
      "UPDATE lifecycles SET session = coalesce(session, ?), trace_id = coalesce(trace_id, ?) WHERE seq = ? AND (session IS NULL OR (trace_id IS NULL AND ? IS NOT NULL))",
    ),
    insertStep: db.prepare(
      "INSERT OR IGNORE INTO steps (seq, step_key, at, start_at, parent_key, part_key, name, summary, detail, facts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    partFields: db.prepare("SELECT fields FROM parts WHERE seq = ? AND kind = ? AND id = ?").pluck(),
    upsertPart: db.prepare(
      "INSERT INTO parts (seq, kind, id, at, fields) VALUES (?, ?, ?, ?, ?) ON CONFLICT (seq, kind, id) DO UPDATE SET at = max(at, excluded.at), fields = excluded.fields",
    ),
    lifecycleOf: db.prepare("SELECT kind, session, trace_id AS traceId FROM lifecycles WHERE seq = ?"),
    stepsOf: db.prepare("SELECT step_key AS key, at, name, summary, facts FROM steps WHERE seq = ?"),
    partsOf: db.prepare("SELECT kind, id, at, fields FROM parts WHERE seq = ?"),
    fold: db.prepare(
      `UPDATE lifecycles SET state = ?, started_at = ?, queued_at = ?, processing_at = ?, finished_at = ?, first_at = ?, last_at = ?, received_at = ?,
         prompt = ?, output = ?, error = ?, model = ?, attempt = ?, last_step = ?, calls = ?, tools = ?, input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, cost_usd = ?,
         estimated_calls = ?, unpriced_calls = ?, waiting_on = ?, abandoned_by = ?, abandoned_at = ?
       WHERE seq = ?`,
    ),
    dataVersion: db.prepare("PRAGMA data_version").pluck(),
    countUnmapped: db.prepare(
      "INSERT INTO unmapped (service, signal, name, count, last_at) VALUES (?, ?, ?, 1, ?) ON CONFLICT (service, signal, name) DO UPDATE SET count = count + 1, last_at = excluded.last_at",
    ),
    countUnshown: db.prepare(
      "INSERT INTO unshown (known_by, service, signal, name, count, last_at) VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT (known_by, service, signal, name) DO UPDATE SET count = count + 1, last_at = excluded.last_at",
    ),
    countIntake: db.prepare(
      "INSERT INTO intake (signal, exports, records, rejected, last_at) VALUES (?, 1, ?, ?, ?) ON CONFLICT (signal) DO UPDATE SET exports = exports + 1, records = records + excluded.records, rejected = rejected + excluded.rejected, last_at = excluded.last_at",
    ),
    keepPosition: keepPositionStatement(db),
    remove: ["lifecycle_keys", "steps", "parts", "lifecycles"].map((table) => db.prepare(`DELETE FROM ${table} WHERE seq IN (SELECT value FROM json_each(?))`)),
  };
}

/** A prompt's key by its session, the intake that told it and when it was sent (padded, so the keys sort as the times do). */
const sentPrefix = (session: string, by: string) => `sent:${session}:${by}:`;
const sentKey = (session: string, by: string, at: number) => `${sentPrefix(session, by)}${String(Math.max(0, Math.round(at))).padStart(15, "0")}`;

/**
 * Lifecycles whose tallies are kept in memory: those still going on (a turn spans a few exports). A
 * finished one is let go at once, so a stream of short turns leaves no tallies to outlive them; a
 * record that comes for it later adds it up again from the store.
 */
const LIVE_TALLIES = 2000;

/** A lifecycle the store holds in memory: its tally, and what its row says of its session. */
interface Live {
  tally: Tally;
  session: string | null;
  traceId: string | null;
}

/**
 * reqwatch's own store of what its OTLP receiver was sent (`telemetry.db`, beside the index; never
 * in a folder reqwatch only observes): the lifecycles the mapping made, each step of their history
 * (by a key of its own: a record sent twice counts once), their parts (model calls, tool uses; what
 * a span and a log record say of the same call merged into one), the keys that name them, and what
 * mapped to nothing, counted. Each lifecycle's row is what its steps and parts add up to
 * (lib/telemetry/mapping/fold.ts), whatever order they arrived in: the lifecycles being received
 * are tallied in memory and a new step is added to its tally, so an export does not read their
 * steps again; a tally not held is added up from the store. Its tables are store/schema.ts's; what reads it
 * (the `otel` source, the sessions, the charts, Health) does through store/queries/, on a read-only
 * connection of its own (store/readStore.ts).
 */
export class TelemetryStore {
  // The connection and what is made on it: set by `connect`, again when the file is opened afresh.
  #db!: Database.Database;
  #sql!: ReturnType<typeof statements>;
  /** The file the connection has open, as the file system names it: another file at the path (or none) is noticed before a write. */
  #identity!: { dev: number; ino: number };
  /** The lifecycles received lately, by seq, the least recently touched first. */
  readonly #live = new Map<number, Live>();
  /** `PRAGMA data_version` after this connection's last write: another one that changes the store makes it differ. */
  #dataVersion = -1;
  #keepTransaction!: Database.Transaction<(batch: ExportBatch, now: number) => number>;
  #keepFileTransaction!: Database.Transaction<(batch: FileBatch, now: number) => number>;
  /** How many times the file was opened: another file at the path (or none) makes it a store of its own. */
  #opened = 0;
  readonly #options: TelemetryStoreOptions;

  constructor(
    readonly file: string,
    options: TelemetryStoreOptions,
  ) {
    this.#options = options;
    this.#connect();
  }

  #connect(): void {
    [this.#db, this.#identity] = openStoreFile(this.file);
    this.#opened += 1;
    this.#sql = statements(this.#db);
    // Made once a connection: better-sqlite3 builds its wrapper anew on each `transaction` call.
    this.#keepTransaction = this.#db.transaction(this.#keepExport.bind(this));
    this.#keepFileTransaction = this.#db.transaction(this.#keepFile.bind(this));
  }

  /** Open the file at the path afresh (it was deleted, replaced or damaged): what was held in memory is of the old one. */
  #reopen({ damaged = false } = {}): void {
    this.#db.close();
    // Renamed once closed, so its last pages are in the copy.
    if (damaged) setAside(this.file);
    this.#live.clear();
    this.#dataVersion = -1;
    this.#connect();
  }

  /** The connection's file is still the one at the path: else (deleted, replaced by another program) the path's is opened, or made. */
  #checkFile(): void {
    const now = identityOf(this.file);
    if (!now || now.dev !== this.#identity.dev || now.ino !== this.#identity.ino) this.#reopen();
  }

  /**
   * Keep one export's changes, mapped and redacted (lib/telemetry/pipeline): each step added to its
   * lifecycle's tally and the lifecycles it touched written once, what maps to nothing counted, the
   * export counted (with what the decoder rejected), all in one transaction. Returns how many
   * lifecycles changed.
   */
  keep(batch: ExportBatch, now = Date.now()): number {
    this.#checkFile();
    try {
      return this.#keepTransaction.immediate(batch, now);
    } catch (error) {
      // The transaction was rolled back: the tallies may hold steps the store does not.
      this.#live.clear();
      // A file damaged under it is set aside and a new one started; this export fails (the receiver answers 503, and its exporter sends it again).
      if (isDamage(error)) this.#reopen({ damaged: true });
      throw error;
    }
  }

  /**
   * Keep what lines of an agent's file told and the file's new position, in one transaction: a
   * read is kept whole or not at all, so the next read starts where what was kept ends. Returns how
   * many lifecycles changed.
   */
  keepFileRead(batch: FileBatch, now = Date.now()): number {
    this.#checkFile();
    try {
      return this.#keepFileTransaction.immediate(batch, now);
    } catch (error) {
      this.#live.clear();
      if (isDamage(error)) this.#reopen({ damaged: true });
      throw error;
    }
  }

  /**
   * Which store the path holds: a number that changes when the file was deleted, replaced or set
   * aside and another opened. What a reader held of the one before (how far it read each agent's
   * file) is not this one's.
   */
  generation(): number {
    this.#checkFile();
    return this.#opened;
  }

  /** Where each of an agent's files was read to. */
  filePositions(agent: string): FilePosition[] {
    this.#checkFile();
    return filePositions(this.#db, agent);
  }

  /** `keepFileRead`'s transaction. */
  #keepFile(batch: FileBatch, now: number): number {
    const touched = this.#applyChanges(batch.changes, now);
    this.#sql.keepPosition(batch.position);
    return touched;
  }

  /** `keep`'s transaction. */
  #keepExport(batch: ExportBatch, now: number): number {
    const touched = this.#applyChanges(batch.changes, now);
    for (const item of batch.unmapped) {
      if (item.knownBy !== undefined) this.#sql.countUnshown.run(item.knownBy, item.service.slice(0, 200), item.signal, item.name.slice(0, 200), now);
      else this.#sql.countUnmapped.run(item.service.slice(0, 200), item.signal, item.name.slice(0, 200), now);
    }
    this.#sql.countIntake.run(batch.signal, batch.records, batch.rejected, now);
    return touched;
  }

  /** Each change applied and the lifecycles it touched written once; returns how many. */
  #applyChanges(changes: readonly LifecycleChange[], now: number): number {
    // Another connection that wrote the store (a second dashboard on the same folder) makes what is
    // held in memory stale. Read with the write lock held, so no other write can come between.
    const version = this.#sql.dataVersion.get() as number;
    if (version !== this.#dataVersion) this.#live.clear();
    this.#dataVersion = version;
    const touched = new Set<number>();
    for (const change of changes) {
      const seq = this.#apply(change, now);
      if (seq !== null) touched.add(seq);
    }
    for (const seq of touched) this.#writeFolded(seq, now);
    return touched.size;
  }

  /** One change: its lifecycle found (or made) by its keys, its step and part kept and added to its tally. Null when the step was kept before. */
  #apply(change: LifecycleChange, now: number): number | null {
    // A point lookup per key (one to three): cheaper than one query over a list of them.
    const seqOf = change.keys.map((key) => this.#sql.seqOfKey.get(key) as number | undefined);
    const found = [...new Set(seqOf.filter((seq): seq is number => seq !== undefined))].sort((a, b) => a - b);
    // The lifecycle it happened inside, when that is known: it becomes part of it (and of its kind).
    const parentSeq = change.parent === undefined ? undefined : (this.#sql.seqOfKey.get(change.parent) as number | undefined);
    let seq = parentSeq ?? found[0];
    let live: Live | null;
    let merged = false;
    if (seq === undefined) {
      seq = Number(
        this.#sql.insertLifecycle.run(
          change.kind,
          change.service,
          change.session ?? null,
          change.traceId ?? null,
          change.step.at,
          change.step.at,
          change.step.at,
          now,
        ).lastInsertRowid,
      );
      live = this.#remember(seq, { tally: emptyTally(change.kind), session: change.session ?? null, traceId: change.traceId ?? null });
    } else {
      // Keys that named two lifecycles (a turn seen by its spans, then by its log events, a call and the run it was part of): one now.
      for (const other of found.filter((other) => other !== seq)) {
        this.#merge(other, seq);
        merged = true;
      }
      live = this.#liveOf(seq);
    }
    change.keys.forEach((key, i) => {
      if (seqOf[i] !== seq) this.#sql.addKey.run(key, seq);
    });
    if (change.parent !== undefined && parentSeq === undefined) this.#sql.addKey.run(`awaits:${change.parent}:${change.keys[0]}`, seq);
    // Its children that arrived before it (a span is exported when it ends): taken in.
    for (const key of change.keys) {
      for (const waiting of this.#sql.awaiting.all(`awaits:${key}:`, `awaits:${key};`) as { key: string; seq: number }[]) {
        this.#sql.removeKey.run(waiting.key);
        if (waiting.seq === seq) continue;
        this.#merge(waiting.seq, seq);
        merged = true;
      }
    }
    if (change.promptSent) {
      const other = this.#sameTurnTold(change.promptSent, seq);
      if (other !== undefined) {
        this.#merge(other, seq);
        merged = true;
      }
      this.#sql.addKey.run(sentKey(change.promptSent.session, change.promptSent.by, change.promptSent.at), seq);
    }
    if (merged) live = this.#liveOf(seq);
    if (change.session && live && (live.session === null || (live.traceId === null && change.traceId))) {
      this.#sql.setSession.run(change.session, change.traceId ?? null, seq, change.traceId ?? null);
      live.session ??= change.session;
      live.traceId ??= change.traceId ?? null;
    }
    const { step } = change;
    // The part is kept in its own table, merged with what else told of it.
    const { part, ...facts } = change.facts;
    const kept = this.#sql.insertStep.run(
      seq,
      step.key,
      step.at,
      step.startAt ?? null,
      step.parentKey ?? null,
      part ? partKey(part) : null,
      step.name,
      step.summary,
      JSON.stringify(step.detail),
      JSON.stringify(facts),
    );
    if (kept.changes === 0) return merged ? seq : null;
    if (live) addStep(live.tally, { key: step.key, at: step.at, name: step.name, summary: step.summary, facts });
    if (part) this.#keepPart(seq, part, live?.tally);
    return seq;
  }

  /**
   * The turn the other intake told of the same prompt (`promptSent`): of its session, its prompt sent
   * the nearest in time within `PROMPT_JOIN_MS`, and not joined to another told by this intake.
   */
  #sameTurnTold(sent: PromptSent, seq: number): number | undefined {
    const other = sent.by === "files" ? "telemetry" : "files";
    const theirs = sentPrefix(sent.session, other);
    if (this.#sql.hasKeyIn.get(seq, theirs, `${theirs}~`) !== undefined) return undefined;
    const near = this.#sql.promptsSent.all(sentKey(sent.session, other, sent.at - PROMPT_JOIN_MS), sentKey(sent.session, other, sent.at + PROMPT_JOIN_MS)) as {
      key: string;
      seq: number;
    }[];
    const mine = sentPrefix(sent.session, sent.by);
    const candidates = near
      .filter((told) => told.seq !== seq && this.#sql.hasKeyIn.get(told.seq, mine, `${mine}~`) === undefined)
      .map((told) => ({ seq: told.seq, apart: Math.abs(Number(told.key.slice(told.key.lastIndexOf(":") + 1)) - sent.at) }))
      .sort((a, b) => a.apart - b.apart);
    return candidates[0]?.seq;
  }

  /** Keep a part, merged with what was known of it: from the tally when there is one, else from the store. */
  #keepPart(seq: number, part: Part, tally?: Tally): void {
    const key = partKey(part);
    const stored = tally ? undefined : (this.#sql.partFields.get(seq, part.kind, part.id) as string | undefined);
    const known = tally ? tally.parts.get(key) : stored === undefined ? undefined : { ...part, fields: JSON.parse(stored) as Part["fields"] };
    const merged = mergePart(known, part);
    tally?.parts.set(key, merged);
    this.#sql.upsertPart.run(seq, part.kind, part.id, part.at, JSON.stringify(merged.fields));
  }

  /** Move `from`'s keys, steps and parts to `into`, and remove it. */
  #merge(from: number, into: number): void {
    this.#live.delete(into);
    this.#db.prepare("UPDATE OR IGNORE lifecycle_keys SET seq = ? WHERE seq = ?").run(into, from);
    this.#db.prepare("UPDATE OR IGNORE steps SET seq = ? WHERE seq = ?").run(into, from);
    for (const part of this.#sql.partsOf.all(from) as { kind: Part["kind"]; id: string; at: number; fields: string }[]) {
      this.#keepPart(into, { kind: part.kind, id: part.id, at: part.at, fields: JSON.parse(part.fields) as Part["fields"] });
    }
    this.#remove([from]);
  }

  /** A lifecycle held in memory, the most recently touched last; the least recent goes past `LIVE_TALLIES`. */
  #remember(seq: number, live: Live): Live {
    this.#live.delete(seq);
    this.#live.set(seq, live);
    if (this.#live.size > LIVE_TALLIES) this.#live.delete(this.#live.keys().next().value!);
    return live;
  }

  /** A lifecycle's tally: held, or added up again from its steps and parts in the store. Null when it is gone (merged into another). */
  #liveOf(seq: number): Live | null {
    const held = this.#live.get(seq);
    if (held) return this.#remember(seq, held);
    const row = this.#sql.lifecycleOf.get(seq) as { kind: LifecycleKind; session: string | null; traceId: string | null } | undefined;
    if (!row) return null;
    const tally = emptyTally(row.kind);
    for (const step of this.#sql.stepsOf.all(seq) as { key: string; at: number; name: string; summary: string; facts: string }[]) {
      addStep(tally, { key: step.key, at: step.at, name: step.name, summary: step.summary, facts: JSON.parse(step.facts) as Facts });
    }
    for (const part of this.#sql.partsOf.all(seq) as { kind: Part["kind"]; id: string; at: number; fields: string }[]) {
      tally.parts.set(partKey(part), { kind: part.kind, id: part.id, at: part.at, fields: JSON.parse(part.fields) as Part["fields"] });
    }
    return this.#remember(seq, { tally, session: row.session, traceId: row.traceId });
  }

  /** A lifecycle's row, as its tally adds up. */
  #writeFolded(seq: number, now: number): void {
    const live = this.#liveOf(seq);
    if (!live) return;
    for (const part of modelsFilled(live.tally)) this.#sql.upsertPart.run(seq, part.kind, part.id, part.at, JSON.stringify(part.fields));
    const f = summarize(live.tally);
    if (f.finishedAt !== null) this.#live.delete(seq);
    this.#sql.fold.run(
      f.state,
      f.startedAt,
      f.queuedAt,
      f.processingAt,
      f.finishedAt,
      f.firstAt,
      f.lastAt,
      now,
      f.prompt,
      f.output,
      f.error,
      f.model,
      f.attempt,
      f.lastStep,
      f.calls,
      f.tools,
      f.inputTokens,
      f.outputTokens,
      f.cacheReadTokens,
      f.cacheWriteTokens,
      f.costUsd,
      f.estimatedCalls,
      f.unpricedCalls,
      f.waitingOn,
      f.abandonedBy,
      f.abandonedAt,
      seq,
    );
  }

  #remove(seqs: readonly number[]): void {
    for (const seq of seqs) this.#live.delete(seq);
    const list = JSON.stringify(seqs);
    for (const remove of this.#sql.remove) remove.run(list);
  }

  /**
   * The retention: lifecycles not heard of for `keepMs` go, then the oldest while the store holds
   * more than `maxBytes` (down to nine tenths of it, so it is not trimmed again at once), in
   * transactions of 500 lifecycles. It runs on the dashboard's one thread, so a call stops after
   * `budgetMs` and says whether there is more; freed pages are reused, and the file is not shrunk
   * (a VACUUM would rewrite all of it while every request waits).
   */
  trim(now = Date.now(), budgetMs = 50): { removed: number; more: boolean } {
    this.#checkFile();
    const started = performance.now();
    let removed = 0;
    const within = () => performance.now() - started < budgetMs;
    const take = (seqs: number[]) => {
      this.#db.transaction(() => this.#remove(seqs))();
      removed += seqs.length;
    };
    const expired = this.#db.prepare("SELECT seq FROM lifecycles WHERE received_at < ? ORDER BY received_at LIMIT 500").pluck();
    for (let seqs = expired.all(now - this.#options.keepMs) as number[]; seqs.length; seqs = expired.all(now - this.#options.keepMs) as number[]) {
      take(seqs);
      if (!within()) return { removed, more: true };
    }
    if (this.bytes() <= this.#options.maxBytes) return { removed, more: false };
    const oldest = this.#db.prepare("SELECT seq FROM lifecycles ORDER BY received_at LIMIT 500").pluck();
    while (this.bytes() > this.#options.maxBytes * 0.9) {
      const seqs = oldest.all() as number[];
      if (!seqs.length) break;
      take(seqs);
      if (!within()) return { removed, more: true };
    }
    return { removed, more: false };
  }

  bytes(): number {
    return storeBytes(this.#db);
  }

  intake(): IntakeRow[] {
    return storeIntake(this.#db);
  }

  usage(sessions?: number): Usage {
    return storeUsage(this.#db, sessions);
  }

  /** What each dialect knew and showed as no lifecycle (`Dialect.knows`). */
  unshown(): UnmappedPage["known"] {
    return storeUnmapped(this.#db, { limit: 0 }).known;
  }

  /** Every name that mapped to nothing and no dialect knows, the most first. */
  unmapped(): UnmappedRow[] {
    return storeUnmapped(this.#db, { limit: -1 }).rows;
  }

  close(): void {
    this.#db.close();
  }
}
