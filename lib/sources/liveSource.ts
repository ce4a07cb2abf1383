import fs from "node:fs";
import path from "node:path";
import { ReqwatchError, type ErrorCode } from "../model/errors";
import type { ResolvedListFilters } from "../model/listFilters";
import { STATES, type State } from "../model/states";
import { claudeMemQueue, claudeMemShape } from "./claudeMem";
import { claudeMemWorkerQueue } from "./claudeMemWorkerQueue";
import { claudeMemWorkerAddress } from "./workerAddress";
import type { WorkerStatus } from "./workerClient";
import { ClaudeMemWorkerWatch } from "./workerWatch";
import { workerStoreFile } from "../spells/spellStore";
import { openSourceDb, type SourceDb } from "../sqlite/openSourceDb";
import { LiveRows, type QueueLook, type StuckRow } from "./queueLook";
import { safeName } from "../model/storedValues";
import { emptyCounts, type SourceMessage } from "./sourceMessage";
import { readOne, readPage, type SourcePage, type SourceQueue } from "./sourceQueue";
import { parseSourceSpec, type SourceSpec } from "./sourceSpec";
import { readTableMapping, tableQueue } from "./sqliteTable";
import { openTelemetryStore } from "../telemetry/store/readStore";
import { telemetryQueue } from "./telemetryQueue";

/** A source as the Health page, the table's source filter and the event stream show it. */
export interface SourceStatus {
  /** What the table's filter and links call it (`?source=`). */
  name: string;
  kind: SourceSpec["kind"];
  /** The database (for a sqlite source, once its mapping was read). */
  file: string | null;
  /** The mapping file, for a sqlite source. */
  mapping: string | null;
  table: string | null;
  /** For claude-mem: the release range whose schema the table matches best. */
  generation: string | null;
  /** For claude-mem: whether claude-mem no longer processes the table. */
  retired: boolean;
  /** For claude-mem from v13.4.0: its worker, which holds the queue in memory (lib/sources/workerWatch.ts). */
  worker: WorkerStatus | null;
  /** Opened with `?write=1`: the dashboard may retry and delete where the owner's own recovery does the same. */
  writable: boolean;
  /** Why it cannot be read now (it is tried again every few seconds); null when it can. */
  error: { code: string; message: string } | null;
  counts: Record<State, number>;
  total: number;
  stuck: number;
  /** A big table is read in slices at first: until it is read through, `stuck` counts the rows read so far. */
  counting: boolean;
  lastWriteAt: number | null;
  /** When it was last read, and how long that took (ms). */
  readAt: number | null;
  readMs: number | null;
}

/** A read again at least this often while nothing is written: stuck reasons depend on the time. */
const RESUMMARIZE_MS = 5000;
/** A source that cannot be read is tried again this often. */
const REOPEN_MS = 2000;
/** How long a look waits for an owner's lock: the dashboard's one thread waits with it, so briefly; a lock held longer is reported as such. */
const LOOK_BUSY_MS = 100;
/** How long a look reads a table it has not read through yet (the rest at the next look): the dashboard's one thread waits meanwhile. */
const FIRST_READ_SLICE_MS = 25;

/**
 * One source the dashboard shows: a read-only connection kept open (SQLite's data_version then
 * says, for the cost of a pragma, whether the owner committed since the last look), the table's
 * live rows without their text (lib/sources/queueLook.ts: read again only where the owner wrote),
 * its counts and stuck rows as of the last look, and pages read on demand. A file replaced under
 * the same name (a new inode) is reopened; a source that fails is reported and tried again, alone.
 */
export class LiveSource {
  #db: SourceDb | null = null;
  #queue: SourceQueue | null = null;
  #rows: LiveRows | null = null;
  #describe: Pick<SourceStatus, "file" | "mapping" | "table" | "generation" | "retired"> = {
    file: null,
    mapping: null,
    table: null,
    generation: null,
    retired: false,
  };
  #ino = 0;
  #version: string | null = null;
  #summary: QueueLook | null = null;
  #error: ReqwatchError | null = null;
  #readAt: number | null = null;
  #readMs: number | null = null;
  #failedAt = 0;
  /** What the source showed after its last look that read: refresh reports a change against it. */
  #shown = "";
  /** claude-mem from v13.4.0: the watch on its worker, and the spells it kept (shown first, before the table's left-overs). */
  #watch: ClaudeMemWorkerWatch | null = null;
  #spells: { db: SourceDb; queue: SourceQueue; rows: LiveRows } | null = null;
  /** Where reqwatch keeps what it sees of a source that keeps nothing itself (the index's folder); without it, claude-mem 13 shows its table alone. */
  readonly #storeDir: string | null;

  constructor(
    readonly name: string,
    readonly spec: SourceSpec,
    storeDir: string | null = null,
  ) {
    this.#storeDir = storeDir;
  }

  /** Look again (cheap when nothing was written); true when what the source shows changed. */
  refresh(now = Date.now()): boolean {
    try {
      if (this.#db && this.#replaced()) this.close();
      if (!this.#db) {
        if (this.#error && now - this.#failedAt < REOPEN_MS) return false;
        this.#open();
      }
      const version = [this.#db!, this.#spells?.db].map((db) => db?.pragma("data_version", { simple: true }) ?? "").join(":");
      const counting = this.#rows!.counting || (this.#spells?.rows.counting ?? false);
      if (this.#readAt !== null && !counting) {
        const since = now - this.#readAt;
        // A busy owner is read at most a quarter of the time, whatever its pace.
        if (version === this.#version ? since < RESUMMARIZE_MS : since < 4 * (this.#readMs ?? 0)) return false;
      }
      const started = performance.now();
      // Only what the owner wrote is read; with nothing written, the rows kept are judged again at `now`.
      if (version !== this.#version || counting) {
        this.#rows!.catchUp(this.#db!, FIRST_READ_SLICE_MS);
        this.#spells?.rows.catchUp(this.#spells.db, FIRST_READ_SLICE_MS);
      }
      const look = this.#rows!.look(now);
      if (this.#spells) {
        const spells = this.#spells.rows.look(now);
        for (const state of STATES) look.counts[state] += spells.counts[state];
        this.#summary = {
          counts: look.counts,
          total: look.total + spells.total,
          lastWriteAt: Math.max(look.lastWriteAt ?? 0, spells.lastWriteAt ?? 0) || null,
          stuck: [...spells.stuck, ...look.stuck],
          counting: look.counting || spells.counting,
        };
      } else {
        this.#summary = look;
      }
      this.#version = version;
      this.#readAt = now;
      this.#readMs = Math.round((performance.now() - started) * 10) / 10;
      this.#error = null;
    } catch (error) {
      this.#fail(error, now);
    }
    // Against what the last look that read (or failed) showed: a look that read nothing changed nothing.
    const shown = this.#fingerprint();
    const changed = shown !== this.#shown;
    this.#shown = shown;
    return changed;
  }

  status(): SourceStatus {
    const summary = this.#summary;
    return {
      name: this.name,
      kind: this.spec.kind,
      ...this.#describe,
      writable: this.spec.kind === "claude-mem" && this.spec.write === true,
      worker: this.#watch?.status() ?? null,
      error: this.#error && { code: this.#error.code, message: this.#error.message },
      counts: summary?.counts ?? emptyCounts(),
      total: summary?.total ?? 0,
      stuck: summary?.stuck.length ?? 0,
      counting: summary?.counting ?? false,
      lastWriteAt: summary?.lastWriteAt ?? null,
      readAt: this.#readAt,
      readMs: this.#readMs,
    };
  }

  /** The stuck rows as of the last look. */
  stuck(): readonly StuckRow[] {
    return this.#summary?.stuck ?? [];
  }

  /** A page of rows, newest first; claude-mem 13's spells all on the first page, before the table's rows (there are few: a week's). */
  page(filters: ResolvedListFilters, now = Date.now()): SourcePage {
    return this.#reading(now, (db, queue) => {
      const spells = this.#spells && filters.cursor === undefined ? readPage(this.#spells.db, this.#spells.queue, this.name, filters, now, null).items : [];
      const rows = readPage(db, queue, this.name, { ...filters, limit: Math.max(1, filters.limit - spells.length) }, now, this.#summary?.lastWriteAt ?? null);
      return spells.length ? { items: [...spells, ...rows.items].slice(0, Math.max(filters.limit, spells.length)), nextCursor: rows.nextCursor } : rows;
    });
  }

  get(requestId: string, now = Date.now()): SourceMessage | null {
    return this.#reading(now, (db, queue) => {
      if (this.#spells && this.#spells.queue.rowId(requestId) !== null) return readOne(this.#spells.db, this.#spells.queue, requestId, now, null);
      return readOne(db, queue, requestId, now, this.#summary?.lastWriteAt ?? null);
    });
  }

  close(): void {
    this.#db?.close();
    this.#db = null;
    this.#queue = null;
    this.#rows = null;
    this.#version = null;
    this.#spells?.db.close();
    this.#spells = null;
    void this.#watch?.close();
    this.#watch = null;
  }

  #reading<T>(now: number, read: (db: SourceDb, queue: SourceQueue) => T): T {
    if (!this.#db) this.refresh(now);
    if (!this.#db || !this.#queue) throw this.#error ?? new ReqwatchError("IO_ERROR", `Source ${this.name} cannot be read.`);
    try {
      return read(this.#db, this.#queue);
    } catch (error) {
      // A bad cursor is the caller's; anything else is the source's, and shows on the Health page.
      if (!(error instanceof ReqwatchError && error.code === "BAD_INPUT")) this.#fail(error, now);
      throw error;
    }
  }

  #open(): void {
    if (this.spec.kind === "otel") {
      const file = this.spec.file;
      this.#describe = { file, mapping: null, table: "lifecycles", generation: null, retired: false };
      this.#db = openTelemetryStore(file, LOOK_BUSY_MS);
      this.#queue = telemetryQueue(file, this.spec.stuckAfterMs);
    } else if (this.spec.kind === "claude-mem") {
      const file = this.spec.file;
      this.#describe = { ...this.#describe, file, table: "pending_messages" };
      const db = openSourceDb(file, "claude-mem source", { busyMs: LOOK_BUSY_MS });
      try {
        const shape = claudeMemShape(db, file);
        this.#describe = { file, mapping: null, table: "pending_messages", generation: shape.generation, retired: shape.retired };
        this.#queue = claudeMemQueue(shape, file);
        // The queue is in the worker's memory: follow the worker, and show the spells kept of it.
        if (shape.retired && this.#storeDir) this.#followWorker(file, this.#storeDir);
      } catch (error) {
        db.close();
        throw error;
      }
      this.#db = db;
    } else {
      this.#describe = { ...this.#describe, mapping: this.spec.mapping };
      const mapping = readTableMapping(this.spec.mapping);
      this.#describe = { ...this.#describe, file: mapping.database, table: mapping.table };
      const db = openSourceDb(mapping.database, "sqlite source", { busyMs: LOOK_BUSY_MS });
      try {
        this.#queue = tableQueue(db, mapping);
      } catch (error) {
        db.close();
        throw error;
      }
      this.#db = db;
    }
    this.#rows = new LiveRows(this.#queue!);
    this.#ino = this.#inode() ?? 0;
  }

  #followWorker(file: string, storeDir: string): void {
    const address = claudeMemWorkerAddress(path.dirname(file));
    const store = workerStoreFile(storeDir, file);
    this.#watch = new ClaudeMemWorkerWatch(address, store);
    this.#watch.start();
    const queue = claudeMemWorkerQueue(store);
    this.#spells = { db: openSourceDb(store, "claude-mem worker store", { busyMs: LOOK_BUSY_MS }), queue, rows: new LiveRows(queue) };
  }

  #inode(): number | null {
    try {
      return fs.statSync(this.#describe.file!).ino;
    } catch {
      return null;
    }
  }

  /** The file was deleted or replaced since it was opened: the open connection reads what is gone. */
  #replaced(): boolean {
    return this.#inode() !== this.#ino;
  }

  #fail(error: unknown, now: number): void {
    this.close();
    this.#summary = null;
    this.#failedAt = now;
    this.#error =
      error instanceof ReqwatchError ? error : new ReqwatchError("IO_ERROR", `Source ${this.name}: ${(error as Error).message}`, {}, { cause: error });
  }

  #fingerprint(): string {
    const s = this.#summary;
    const worker = this.#watch?.status();
    // A stuck row's reason says how long: a page showing it is told again each minute, not at each look.
    const minute = s?.stuck.length && this.#readAt !== null ? Math.floor(this.#readAt / 60_000) : null;
    return JSON.stringify([
      this.#version,
      this.#error?.message,
      s?.total,
      s?.counts,
      s?.lastWriteAt,
      s?.counting,
      s?.stuck.length,
      s && stuckDigest(s.stuck),
      minute,
      worker && [worker.running, worker.error, worker.snapshot],
    ]);
  }
}

/** Which rows are stuck, in one number (FNV-1a): a change shows, without a copy of every id kept. */
function stuckDigest(stuck: readonly StuckRow[]): number {
  let hash = 0x811c9dc5;
  for (const { requestId } of stuck) {
    for (let i = 0; i < requestId.length; i++) hash = Math.imul(hash ^ requestId.charCodeAt(i), 0x01000193);
    hash = Math.imul(hash ^ 0x0a, 0x01000193);
  }
  return hash >>> 0;
}

/** The names a list of sources goes by: claude-mem's kind, a mapping's file name; a second of the same name gets -2. */
export function sourceNames(specs: readonly SourceSpec[]): string[] {
  const taken = new Set<string>();
  return specs.map((spec) => {
    const base = spec.kind === "sqlite" ? (safeName(path.basename(spec.mapping).replace(/\.json$/i, ""), /^[A-Za-z0-9_-]{1,64}$/, 48) ?? "sqlite") : spec.kind;
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
    taken.add(name);
    return name;
  });
}

/** `REQWATCH_SOURCES`: source specs separated by commas, or a JSON array of them (what `reqwatch dashboard --source` passes). */
export function sourcesFromEnv(value: string | undefined, cwd = process.cwd()): SourceSpec[] {
  if (!value?.trim()) return [];
  let list: unknown = null;
  if (value.trim().startsWith("[")) {
    try {
      list = JSON.parse(value);
    } catch {
      list = null;
    }
    if (!Array.isArray(list) || !list.every((item) => typeof item === "string"))
      throw new ReqwatchError("BAD_INPUT", "REQWATCH_SOURCES: a JSON list must be a list of source texts.");
  }
  return ((list as string[] | null) ?? value.split(","))
    .map((text) => text.trim())
    .filter(Boolean)
    .map((text) => parseSourceSpec(text, cwd));
}

/**
 * The dashboard's sources, looked at every `pollMs` (data_version: a pragma each); `onChange` hears
 * of each look that changed what one shows. Sources are independent: one that fails changes
 * nothing for the others.
 */
export class SourceSet {
  readonly sources: readonly LiveSource[];
  #timer: NodeJS.Timeout | null = null;

  constructor(specs: readonly SourceSpec[], storeDir: string | null = null) {
    const names = sourceNames(specs);
    this.sources = specs.map((spec, i) => new LiveSource(names[i]!, spec, storeDir));
  }

  start(onChange: (changed: string[]) => void, pollMs = 250): void {
    if (!this.sources.length || this.#timer) return;
    const look = () => {
      const changed = this.sources.filter((source) => source.refresh()).map((source) => source.name);
      if (changed.length) onChange(changed);
    };
    look();
    this.#timer = setInterval(look, pollMs);
    this.#timer.unref();
  }

  statuses(): SourceStatus[] {
    return this.sources.map((source) => source.status());
  }

  /** The source of that name; NOT_FOUND naming the ones there are. */
  get(name: string): LiveSource {
    const source = this.sources.find((candidate) => candidate.name === name);
    if (!source) {
      const known = this.sources.map((candidate) => candidate.name);
      throw new ReqwatchError(
        "NOT_FOUND",
        `No source is named ${JSON.stringify(name)}; ${known.length ? `the dashboard reads ${known.join(", ")}` : "the dashboard reads none (start it with --source)"}.`,
      );
    }
    return source;
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    for (const source of this.sources) source.close();
  }
}

/**
 * A source read once, as the CLI and the MCP server read one: read through at once (the dashboard
 * reads a big table in slices, but a row's stuck reason may need the table's newest time), a
 * source that cannot be read thrown as its error, and closed after.
 */
export function readSourceOnce<T>(spec: SourceSpec, read: (source: LiveSource) => T): T {
  const [name] = sourceNames([spec]);
  const source = new LiveSource(name!, spec);
  try {
    do source.refresh();
    while (source.status().counting);
    const failure = source.status().error;
    if (failure) throw new ReqwatchError(failure.code as ErrorCode, failure.message);
    return read(source);
  } finally {
    source.close();
  }
}
