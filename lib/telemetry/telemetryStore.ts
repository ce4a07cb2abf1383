import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { shownName } from "../sources/sourceMessage";
import { openDatabase } from "../sqlite/openDatabase";
import { CALL_TOLD_ONCE } from "./callToldOnce";
import type { Facts, LifecycleChange, LifecycleKind, Part, Unmapped } from "./mapping/changes";
import { addStep, emptyTally, mergePart, partKey, summarize, type Tally } from "./mapping/fold";
import type { Signal } from "./records";

/**
 * reqwatch's own store of what its OTLP receiver was sent (`telemetry.db`, beside the index; never
 * in a folder reqwatch only observes): the lifecycles the mapping made, each step of their history
 * (by a key of its own: a record sent twice counts once), their parts (model calls, tool uses; what
 * a span and a log record say of the same call merged into one), the keys that name them, and what
 * mapped to nothing, counted. Each lifecycle's row is what its steps and parts add up to
 * (lib/telemetry/mapping/fold.ts), whatever order they arrived in: the lifecycles being received
 * are tallied in memory and a new step is added to its tally, so an export does not read their
 * steps again; a tally not held is added up from the store. The dashboard reads it as a source
 * (lib/sources/telemetryQueue.ts) through a read-only connection of its own.
 */
const DDL = `
CREATE TABLE IF NOT EXISTS lifecycles (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  service TEXT NOT NULL,
  session TEXT,
  trace_id TEXT,
  state TEXT NOT NULL,
  started_at REAL NOT NULL,
  queued_at REAL,
  processing_at REAL,
  finished_at REAL,
  first_at REAL NOT NULL,
  last_at REAL NOT NULL,
  received_at INTEGER NOT NULL,
  prompt TEXT,
  output TEXT,
  error TEXT,
  model TEXT,
  attempt INTEGER,
  last_step TEXT NOT NULL,
  calls INTEGER NOT NULL,
  tools INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  estimated_calls INTEGER NOT NULL DEFAULT 0,
  unpriced_calls INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS lifecycles_received ON lifecycles (received_at);
CREATE INDEX IF NOT EXISTS lifecycles_state ON lifecycles (state);
CREATE INDEX IF NOT EXISTS lifecycles_session ON lifecycles (session);
-- The charts count each lifecycle's steps per interval by these times (lib/telemetry/telemetryActivity.ts).
CREATE INDEX IF NOT EXISTS lifecycles_started ON lifecycles (started_at);
CREATE INDEX IF NOT EXISTS lifecycles_queued ON lifecycles (queued_at) WHERE queued_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS lifecycles_processing ON lifecycles (processing_at) WHERE processing_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS lifecycles_finished ON lifecycles (finished_at) WHERE finished_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS lifecycle_keys (key TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS lifecycle_keys_seq ON lifecycle_keys (seq);
CREATE TABLE IF NOT EXISTS steps (
  seq INTEGER NOT NULL,
  step_key TEXT NOT NULL,
  at REAL NOT NULL,
  name TEXT NOT NULL,
  summary TEXT NOT NULL,
  detail TEXT NOT NULL,
  facts TEXT NOT NULL,
  start_at REAL,
  parent_key TEXT,
  -- The call or tool use the step told of (its part's kind and id): a lifecycle's page draws the steps of one part as one bar.
  part_key TEXT,
  PRIMARY KEY (seq, step_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS parts (
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  at REAL NOT NULL,
  fields TEXT NOT NULL,
  PRIMARY KEY (seq, kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS unmapped (
  service TEXT NOT NULL,
  signal TEXT NOT NULL,
  name TEXT NOT NULL,
  count INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY (service, signal, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS intake (
  signal TEXT PRIMARY KEY,
  exports INTEGER NOT NULL,
  records INTEGER NOT NULL,
  rejected INTEGER NOT NULL,
  last_at INTEGER NOT NULL
) WITHOUT ROWID;
`;

export interface TelemetryStoreOptions {
  /** Lifecycles not heard of for this long are removed (`trim`). */
  keepMs: number;
  /** And the oldest go while the store is bigger than this. */
  maxBytes: number;
}

/** One export, as the pipeline hands it to the store: its changes mapped and redacted, and what mapped to nothing. */
export interface ExportBatch {
  signal: Signal;
  /** Records decoded, and rejected by the decoder. */
  records: number;
  rejected: number;
  changes: readonly LifecycleChange[];
  unmapped: readonly Unmapped[];
}

export interface IntakeRow {
  signal: Signal;
  exports: number;
  records: number;
  rejected: number;
  lastAt: number;
}

export interface UnmappedRow extends Unmapped {
  count: number;
  lastAt: number;
}

/** What a set of model calls used. */
export interface UsageSums {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** As the clients said, else estimated at list prices (lib/telemetry/prices.ts). */
  costUsd: number;
  /** Calls whose cost is estimated, and calls with no cost at all (lib/model/money.ts formatCost says both). */
  estimatedCalls: number;
  unpricedCalls: number;
}

/** A call that may have been billed: not a failed attempt that said no tokens (a known $0, as mapping/fold.ts counts it). */
const BILLED = `NOT (json_extract(p.fields, '$.success') = 0 AND json_extract(p.fields, '$.inputTokens') IS NULL AND json_extract(p.fields, '$.outputTokens') IS NULL)`;

/** What model calls (the `parts p` of kind call) used, summed: the columns of UsageSums. */
export const CALL_SUMS = `count(*) AS calls,
    coalesce(sum(json_extract(p.fields, '$.inputTokens')), 0) AS inputTokens,
    coalesce(sum(json_extract(p.fields, '$.outputTokens')), 0) AS outputTokens,
    coalesce(sum(json_extract(p.fields, '$.cacheReadTokens')), 0) AS cacheReadTokens,
    coalesce(sum(json_extract(p.fields, '$.cacheWriteTokens')), 0) AS cacheWriteTokens,
    coalesce(sum(coalesce(json_extract(p.fields, '$.costUsd'), json_extract(p.fields, '$.estimatedCostUsd'))), 0) AS costUsd,
    coalesce(sum(json_extract(p.fields, '$.costUsd') IS NULL AND ${BILLED} AND json_extract(p.fields, '$.estimatedCostUsd') IS NOT NULL), 0) AS estimatedCalls,
    coalesce(sum(json_extract(p.fields, '$.costUsd') IS NULL AND ${BILLED} AND json_extract(p.fields, '$.estimatedCostUsd') IS NULL), 0) AS unpricedCalls`;

export interface Usage {
  /** Per UTC day (`YYYY-MM-DD`) and model, newest day first. */
  byDayAndModel: (UsageSums & { day: string; model: string })[];
  /** Per session, the costliest first, with its prompt turns and tool uses. */
  /** `session` as stored; `sessionId` as its page resolves it (null: it has none). */
  bySession: (UsageSums & { session: string; sessionId: string | null; service: string; turns: number; tools: number; lastAt: number })[];
}

/**
 * A store made by an earlier release, brought to this one's schema: each change once, in order,
 * `user_version` counting those made (the tables themselves are made by DDL, which leaves existing
 * ones as they are).
 */
const MIGRATIONS: readonly string[] = [
  // Steps say when they began and what they happened inside: a lifecycle's page draws them on a timeline.
  "ALTER TABLE steps ADD COLUMN start_at REAL; ALTER TABLE steps ADD COLUMN parent_key TEXT;",
  // A cost not said by the client is estimated at list prices, or counted as unpriced: never $0.
  "ALTER TABLE lifecycles ADD COLUMN estimated_calls INTEGER NOT NULL DEFAULT 0; ALTER TABLE lifecycles ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;",
  // A step says which call or tool use it told of: a lifecycle's page draws every record of one as one bar.
  "ALTER TABLE steps ADD COLUMN part_key TEXT;",
];

/** Make the tables, or bring a store an earlier release made to this schema. */
function makeSchema(db: Database.Database): void {
  const existed = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'lifecycles'").get() !== undefined;
  db.transaction(() => {
    const version = existed ? (db.pragma("user_version", { simple: true }) as number) : MIGRATIONS.length;
    for (const change of MIGRATIONS.slice(version)) db.exec(change);
    db.exec(DDL);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  })();
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
    setSession: db.prepare("UPDATE lifecycles SET session = coalesce(session, ?), trace_id = coalesce(trace_id, ?) WHERE seq = ? AND (session IS NULL OR (trace_id IS NULL AND ? IS NOT NULL))"),
    insertStep: db.prepare("INSERT OR IGNORE INTO steps (seq, step_key, at, start_at, parent_key, part_key, name, summary, detail, facts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    partFields: db.prepare("SELECT fields FROM parts WHERE seq = ? AND kind = ? AND id = ?").pluck(),
    upsertPart: db.prepare("INSERT INTO parts (seq, kind, id, at, fields) VALUES (?, ?, ?, ?, ?) ON CONFLICT (seq, kind, id) DO UPDATE SET at = max(at, excluded.at), fields = excluded.fields"),
    lifecycleOf: db.prepare("SELECT kind, session, trace_id AS traceId FROM lifecycles WHERE seq = ?"),
    stepsOf: db.prepare("SELECT step_key AS key, at, name, summary, facts FROM steps WHERE seq = ?"),
    partsOf: db.prepare("SELECT kind, id, at, fields FROM parts WHERE seq = ?"),
    fold: db.prepare(
      `UPDATE lifecycles SET state = ?, started_at = ?, queued_at = ?, processing_at = ?, finished_at = ?, first_at = ?, last_at = ?, received_at = ?,
         prompt = ?, output = ?, error = ?, model = ?, attempt = ?, last_step = ?, calls = ?, tools = ?, input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, cost_usd = ?,
         estimated_calls = ?, unpriced_calls = ?
       WHERE seq = ?`,
    ),
    dataVersion: db.prepare("PRAGMA data_version").pluck(),
    countUnmapped: db.prepare("INSERT INTO unmapped (service, signal, name, count, last_at) VALUES (?, ?, ?, 1, ?) ON CONFLICT (service, signal, name) DO UPDATE SET count = count + 1, last_at = excluded.last_at"),
    countIntake: db.prepare(
      "INSERT INTO intake (signal, exports, records, rejected, last_at) VALUES (?, 1, ?, ?, ?) ON CONFLICT (signal) DO UPDATE SET exports = exports + 1, records = records + excluded.records, rejected = rejected + excluded.rejected, last_at = excluded.last_at",
    ),
    remove: ["lifecycle_keys", "steps", "parts", "lifecycles"].map((table) => db.prepare(`DELETE FROM ${table} WHERE seq IN (SELECT value FROM json_each(?))`)),
  };
}

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

export class TelemetryStore {
  private db: Database.Database;
  private sql: ReturnType<typeof statements>;
  /** The file the connection has open, as the file system names it: another file at the path (or none) is noticed before a write. */
  private identity: { dev: number; ino: number };
  /** The lifecycles received lately, by seq, the least recently touched first. */
  private readonly live = new Map<number, Live>();
  /** `PRAGMA data_version` after this connection's last write: another one that changes the store makes it differ. */
  private dataVersion = -1;
  private keepTransaction: Database.Transaction<TelemetryStore["keepExport"]>;

  constructor(
    readonly file: string,
    private readonly options: TelemetryStoreOptions,
  ) {
    [this.db, this.identity] = openStoreFile(file);
    this.sql = statements(this.db);
    // Made once: better-sqlite3 builds its wrapper anew on each `transaction` call.
    this.keepTransaction = this.db.transaction(this.keepExport.bind(this));
  }

  /** Open the file at the path afresh (it was deleted, replaced or damaged): what was held in memory is of the old one. */
  private reopen(): void {
    this.db.close();
    this.live.clear();
    this.dataVersion = -1;
    [this.db, this.identity] = openStoreFile(this.file);
    this.sql = statements(this.db);
    this.keepTransaction = this.db.transaction(this.keepExport.bind(this));
  }

  /** The connection's file is still the one at the path: else (deleted, replaced by another program) the path's is opened, or made. */
  private checkFile(): void {
    const now = identityOf(this.file);
    if (!now || now.dev !== this.identity.dev || now.ino !== this.identity.ino) this.reopen();
  }

  /**
   * Keep one export's changes, mapped and redacted (lib/telemetry/pipeline): each step added to its
   * lifecycle's tally and the lifecycles it touched written once, what maps to nothing counted, the
   * export counted (with what the decoder rejected), all in one transaction. Returns how many
   * lifecycles changed.
   */
  keep(batch: ExportBatch, now = Date.now()): number {
    this.checkFile();
    try {
      return this.keepTransaction.immediate(batch, now);
    } catch (error) {
      // The transaction was rolled back: the tallies may hold steps the store does not.
      this.live.clear();
      // A file damaged under it is set aside and a new one started; this export fails (the receiver answers 503, and its exporter sends it again).
      if (isDamage(error)) {
        this.db.close();
        setAside(this.file);
        this.reopen();
      }
      throw error;
    }
  }

  /** `keep`'s transaction. */
  private keepExport(batch: ExportBatch, now: number): number {
    // Another connection that wrote the store (a second dashboard on the same folder) makes what is
    // held in memory stale. Read with the write lock held, so no other write can come between.
    const version = this.sql.dataVersion.get() as number;
    if (version !== this.dataVersion) this.live.clear();
    this.dataVersion = version;
    const touched = new Set<number>();
    for (const change of batch.changes) {
      const seq = this.apply(change, now);
      if (seq !== null) touched.add(seq);
    }
    for (const seq of touched) this.writeFolded(seq, now);
    for (const item of batch.unmapped) this.sql.countUnmapped.run(item.service.slice(0, 200), item.signal, item.name.slice(0, 200), now);
    this.sql.countIntake.run(batch.signal, batch.records, batch.rejected, now);
    return touched.size;
  }

  /** One change: its lifecycle found (or made) by its keys, its step and part kept and added to its tally. Null when the step was kept before. */
  private apply(change: LifecycleChange, now: number): number | null {
    // A point lookup per key (one to three): cheaper than one query over a list of them.
    const seqOf = change.keys.map((key) => this.sql.seqOfKey.get(key) as number | undefined);
    const found = [...new Set(seqOf.filter((seq): seq is number => seq !== undefined))].sort((a, b) => a - b);
    // The lifecycle it happened inside, when that is known: it becomes part of it (and of its kind).
    const parentSeq = change.parent === undefined ? undefined : (this.sql.seqOfKey.get(change.parent) as number | undefined);
    let seq = parentSeq ?? found[0];
    let live: Live | null;
    let merged = false;
    if (seq === undefined) {
      seq = Number(this.sql.insertLifecycle.run(change.kind, change.service, change.session ?? null, change.traceId ?? null, change.step.at, change.step.at, change.step.at, now).lastInsertRowid);
      live = this.remember(seq, { tally: emptyTally(change.kind), session: change.session ?? null, traceId: change.traceId ?? null });
    } else {
      // Keys that named two lifecycles (a turn seen by its spans, then by its log events, a call and the run it was part of): one now.
      for (const other of found.filter((other) => other !== seq)) {
        this.merge(other, seq);
        merged = true;
      }
      live = this.liveOf(seq);
    }
    change.keys.forEach((key, i) => {
      if (seqOf[i] !== seq) this.sql.addKey.run(key, seq);
    });
    if (change.parent !== undefined && parentSeq === undefined) this.sql.addKey.run(`awaits:${change.parent}:${change.keys[0]}`, seq);
    // Its children that arrived before it (a span is exported when it ends): taken in.
    for (const key of change.keys) {
      for (const waiting of this.sql.awaiting.all(`awaits:${key}:`, `awaits:${key};`) as { key: string; seq: number }[]) {
        this.sql.removeKey.run(waiting.key);
        if (waiting.seq === seq) continue;
        this.merge(waiting.seq, seq);
        merged = true;
      }
    }
    if (merged) live = this.liveOf(seq);
    if (change.session && live && (live.session === null || (live.traceId === null && change.traceId))) {
      this.sql.setSession.run(change.session, change.traceId ?? null, seq, change.traceId ?? null);
      live.session ??= change.session;
      live.traceId ??= change.traceId ?? null;
    }
    const { step } = change;
    // The part is kept in its own table, merged with what else told of it.
    const { part, ...facts } = change.facts;
    const kept = this.sql.insertStep.run(seq, step.key, step.at, step.startAt ?? null, step.parentKey ?? null, part ? partKey(part) : null, step.name, step.summary, JSON.stringify(step.detail), JSON.stringify(facts));
    if (kept.changes === 0) return merged ? seq : null;
    if (live) addStep(live.tally, { key: step.key, at: step.at, name: step.name, summary: step.summary, facts });
    if (part) this.keepPart(seq, part, live?.tally);
    return seq;
  }

  /** Keep a part, merged with what was known of it: from the tally when there is one, else from the store. */
  private keepPart(seq: number, part: Part, tally?: Tally): void {
    const key = partKey(part);
    const stored = tally ? undefined : (this.sql.partFields.get(seq, part.kind, part.id) as string | undefined);
    const known = tally ? tally.parts.get(key) : stored === undefined ? undefined : { ...part, fields: JSON.parse(stored) as Part["fields"] };
    const merged = mergePart(known, part);
    tally?.parts.set(key, merged);
    this.sql.upsertPart.run(seq, part.kind, part.id, part.at, JSON.stringify(merged.fields));
  }

  /** Move `from`'s keys, steps and parts to `into`, and remove it. */
  private merge(from: number, into: number): void {
    this.live.delete(into);
    this.db.prepare("UPDATE OR IGNORE lifecycle_keys SET seq = ? WHERE seq = ?").run(into, from);
    this.db.prepare("UPDATE OR IGNORE steps SET seq = ? WHERE seq = ?").run(into, from);
    for (const part of this.sql.partsOf.all(from) as { kind: Part["kind"]; id: string; at: number; fields: string }[]) {
      this.keepPart(into, { kind: part.kind, id: part.id, at: part.at, fields: JSON.parse(part.fields) as Part["fields"] });
    }
    this.remove([from]);
  }

  /** A lifecycle held in memory, the most recently touched last; the least recent goes past `LIVE_TALLIES`. */
  private remember(seq: number, live: Live): Live {
    this.live.delete(seq);
    this.live.set(seq, live);
    if (this.live.size > LIVE_TALLIES) this.live.delete(this.live.keys().next().value!);
    return live;
  }

  /** A lifecycle's tally: held, or added up again from its steps and parts in the store. Null when it is gone (merged into another). */
  private liveOf(seq: number): Live | null {
    const held = this.live.get(seq);
    if (held) return this.remember(seq, held);
    const row = this.sql.lifecycleOf.get(seq) as { kind: LifecycleKind; session: string | null; traceId: string | null } | undefined;
    if (!row) return null;
    const tally = emptyTally(row.kind);
    for (const step of this.sql.stepsOf.all(seq) as { key: string; at: number; name: string; summary: string; facts: string }[]) {
      addStep(tally, { key: step.key, at: step.at, name: step.name, summary: step.summary, facts: JSON.parse(step.facts) as Facts });
    }
    for (const part of this.sql.partsOf.all(seq) as { kind: Part["kind"]; id: string; at: number; fields: string }[]) {
      tally.parts.set(partKey(part), { kind: part.kind, id: part.id, at: part.at, fields: JSON.parse(part.fields) as Part["fields"] });
    }
    return this.remember(seq, { tally, session: row.session, traceId: row.traceId });
  }

  /** A lifecycle's row, as its tally adds up. */
  private writeFolded(seq: number, now: number): void {
    const live = this.liveOf(seq);
    if (!live) return;
    const f = summarize(live.tally);
    if (f.finishedAt !== null) this.live.delete(seq);
    this.sql.fold.run(f.state, f.startedAt, f.queuedAt, f.processingAt, f.finishedAt, f.firstAt, f.lastAt, now, f.prompt, f.output, f.error, f.model, f.attempt, f.lastStep, f.calls, f.tools, f.inputTokens, f.outputTokens, f.cacheReadTokens, f.cacheWriteTokens, f.costUsd, f.estimatedCalls, f.unpricedCalls, seq);
  }

  private remove(seqs: readonly number[]): void {
    for (const seq of seqs) this.live.delete(seq);
    const list = JSON.stringify(seqs);
    for (const remove of this.sql.remove) remove.run(list);
  }

  /**
   * The retention: lifecycles not heard of for `keepMs` go, then the oldest while the store holds
   * more than `maxBytes` (down to nine tenths of it, so it is not trimmed again at once), in
   * transactions of 500 lifecycles. It runs on the dashboard's one thread, so a call stops after
   * `budgetMs` and says whether there is more; freed pages are reused, and the file is not shrunk
   * (a VACUUM would rewrite all of it while every request waits).
   */
  trim(now = Date.now(), budgetMs = 50): { removed: number; more: boolean } {
    this.checkFile();
    const started = performance.now();
    let removed = 0;
    const within = () => performance.now() - started < budgetMs;
    const take = (seqs: number[]) => {
      this.db.transaction(() => this.remove(seqs))();
      removed += seqs.length;
    };
    const expired = this.db.prepare("SELECT seq FROM lifecycles WHERE received_at < ? ORDER BY received_at LIMIT 500").pluck();
    for (let seqs = expired.all(now - this.options.keepMs) as number[]; seqs.length; seqs = expired.all(now - this.options.keepMs) as number[]) {
      take(seqs);
      if (!within()) return { removed, more: true };
    }
    if (this.bytes() <= this.options.maxBytes) return { removed, more: false };
    const oldest = this.db.prepare("SELECT seq FROM lifecycles ORDER BY received_at LIMIT 500").pluck();
    while (this.bytes() > this.options.maxBytes * 0.9) {
      const seqs = oldest.all() as number[];
      if (!seqs.length) break;
      take(seqs);
      if (!within()) return { removed, more: true };
    }
    return { removed, more: false };
  }

  bytes(): number {
    return storeBytes(this.db);
  }

  intake(): IntakeRow[] {
    return storeIntake(this.db);
  }

  usage(sessions?: number): Usage {
    return storeUsage(this.db, sessions);
  }

  /** Every name that mapped to nothing, the most first. */
  unmapped(): UnmappedRow[] {
    return storeUnmapped(this.db, { limit: -1 }).rows;
  }

  close(): void {
    this.db.close();
  }
}

const DAMAGE = new Set(["SQLITE_CORRUPT", "SQLITE_NOTADB"]);
const isDamage = (error: unknown) => DAMAGE.has((error as { code?: string }).code ?? "");

function identityOf(file: string): { dev: number; ino: number } | null {
  try {
    const { dev, ino } = fs.statSync(file);
    return { dev, ino };
  } catch {
    return null;
  }
}

/**
 * The store's file opened to write, made when missing; one that is not an SQLite database or is
 * damaged is set aside (renamed beside it, kept for whoever wants to look at it) and a new one
 * made: what was received is reqwatch's own copy, and the dashboard must go on receiving.
 */
function openStoreFile(file: string): [Database.Database, { dev: number; ino: number }] {
  for (let attempt = 0; ; attempt++) {
    let db: Database.Database | null = null;
    try {
      db = openDatabase(file);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("busy_timeout = 5000");
      makeSchema(db);
      return [db, identityOf(file)!];
    } catch (error) {
      db?.close();
      if (!isDamage(error) || attempt > 0) throw error;
      setAside(file);
    }
  }
}

/** What a damaged store is renamed to: `telemetry.db.damaged-<UTC time>`, with its write-ahead log beside it. */
const SET_ASIDE = ".damaged-";

function setAside(file: string): void {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const to = `${file}${SET_ASIDE}${stamp}`;
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      fs.renameSync(file + suffix, to + suffix);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  console.error(`reqwatch: the telemetry store ${file} is damaged; it was set aside as ${to} and a new one started (what was received before is in the copy; delete it once you no longer need it).`);
}

/** The damaged stores set aside beside `file`, newest first: the Health page names them. */
export function setAsideStores(file: string): string[] {
  const name = path.basename(file) + SET_ASIDE;
  try {
    return fs
      .readdirSync(path.dirname(file))
      .filter((entry) => entry.startsWith(name) && !entry.endsWith("-wal") && !entry.endsWith("-shm"))
      .sort()
      .reverse()
      .map((entry) => path.join(path.dirname(file), entry));
  } catch {
    return [];
  }
}

/** A store's size on disk: its pages in use. */
export function storeBytes(db: Database.Database): number {
  const pages = db.pragma("page_count", { simple: true }) as number;
  const free = db.pragma("freelist_count", { simple: true }) as number;
  const size = db.pragma("page_size", { simple: true }) as number;
  return (pages - free) * size;
}

/** What each signal's exports brought, and what was rejected of them. */
export function storeIntake(db: Database.Database): IntakeRow[] {
  return (db.prepare("SELECT signal, exports, records, rejected, last_at AS lastAt FROM intake ORDER BY signal").all() as IntakeRow[]).map((row) => ({ ...row }));
}

/**
 * Tokens and cost of the model calls kept: per UTC day and model, and per session (the costliest
 * first). Summed over calls (parts), each counted once however many records reported it.
 */
export function storeUsage(db: Database.Database, sessions = 20): Usage {
  const sums = CALL_SUMS;
  const byDayAndModel = db
    .prepare(
      `SELECT strftime('%Y-%m-%d', p.at / 1000, 'unixepoch') AS day, coalesce(json_extract(p.fields, '$.model'), l.model, '(not said)') AS model, ${sums}
       FROM parts p JOIN lifecycles l ON l.seq = p.seq WHERE p.kind = 'call' AND ${CALL_TOLD_ONCE} GROUP BY day, model ORDER BY day DESC, costUsd DESC, model`,
    )
    .all() as Usage["byDayAndModel"];
  const bySession = db
    .prepare(
      `SELECT l.session AS session, min(l.service) AS service, count(DISTINCT CASE WHEN l.kind = 'turn' THEN l.seq END) AS turns, max(l.last_at) AS lastAt, ${sums},
         (SELECT count(*) FROM parts t JOIN lifecycles s ON s.seq = t.seq WHERE t.kind = 'tool' AND s.session = l.session) AS tools
       FROM lifecycles l JOIN parts p ON p.seq = l.seq AND p.kind = 'call' AND ${CALL_TOLD_ONCE} WHERE l.session IS NOT NULL GROUP BY l.session ORDER BY costUsd DESC, lastAt DESC LIMIT ?`,
    )
    .all(sessions) as Omit<Usage["bySession"][number], "sessionId">[];
  return { byDayAndModel, bySession: bySession.map((row) => ({ ...row, sessionId: shownName(row.session, 128) })) };
}

/** How many unmapped names the Health page lists at a time. */
export const UNMAPPED_PAGE = 50;

/** One page of what mapped to no lifecycle, and how many names there are in all. */
export interface UnmappedPage {
  rows: UnmappedRow[];
  total: number;
  offset: number;
  limit: number;
}

/** What mapped to no lifecycle, by service and name, the most first: `limit` of them from `offset` (every one with a limit of -1), and how many there are. */
export function storeUnmapped(db: Database.Database, page: { offset?: number; limit?: number } = {}): UnmappedPage {
  const offset = Math.max(0, Math.floor(page.offset ?? 0));
  const limit = page.limit ?? UNMAPPED_PAGE;
  const rows = db.prepare("SELECT service, signal, name, count, last_at AS lastAt FROM unmapped ORDER BY count DESC, service, signal, name LIMIT ? OFFSET ?").all(limit, offset) as UnmappedRow[];
  const total = db.prepare("SELECT count(*) FROM unmapped").pluck().get() as number;
  return { rows, total, offset, limit };
}
