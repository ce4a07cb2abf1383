import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Database from "better-sqlite3";
import { openDatabase } from "../../sqlite/openDatabase";
import { transcriptsOf } from "../agentFiles/transcripts";
import { Worker } from "node:worker_threads";
import { LINE_BOUNDS, type LineBounds } from "../agentFiles/readLines";
import { PRICE_TABLE } from "../../model/money";
import { estimateCostUsd } from "../prices";
import { CALL_COLUMNS, readUsageFile, type CallRow, type ReaderThreadData, type UsageFileRead, type UsageJob } from "./readUsageFile";
import { replaces, USAGE_AGENTS, USAGE_READERS, type UsageAgent } from "./usageLines";

/**
 * The usage ledger (`usage.db`, beside telemetry.db in the state folder's store folder): each model
 * call the agents' own files tell of, with its tokens and cost, and how far each file was read. Apart
 * from the lifecycles, it is never expired: a report covers the whole history the files hold. Each
 * update reads only the bytes a file gained since (a file replaced or truncated is read again from its
 * start); nothing is written under the agents' folders.
 */

export const usageLedgerFile = (storeDir: string) => path.join(storeDir, "usage.db");

/** What made a ledger: its schema's version and the price table its costs come from. */
const LEDGER_MADE_BY = `ledger 1, ${PRICE_TABLE.name} ${PRICE_TABLE.version}`;

const DEDUPE_INDEX = "CREATE INDEX IF NOT EXISTS usage_calls_dedupe ON usage_calls (dedupe_hash) WHERE dedupe_hash IS NOT NULL";

const DDL = `
CREATE TABLE IF NOT EXISTS usage_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_files (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  agent TEXT NOT NULL,
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  skipping INTEGER NOT NULL,
  state TEXT NOT NULL,
  lines INTEGER NOT NULL,
  malformed INTEGER NOT NULL,
  oversized INTEGER NOT NULL
);
-- One row a call: its file and line (where the line starts: files only grow, so it stays its own), its tokens, its cost (null: unknown).
CREATE TABLE IF NOT EXISTS usage_calls (
  file INTEGER NOT NULL,
  line INTEGER NOT NULL,
  agent TEXT NOT NULL,
  at INTEGER NOT NULL,
  session TEXT NOT NULL,
  project TEXT NOT NULL,
  model TEXT,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL,
  cache_write INTEGER NOT NULL,
  extra INTEGER NOT NULL,
  cost REAL,
  cost_by TEXT,
  dedupe TEXT,
  dedupe_hash INTEGER,
  sidechain INTEGER NOT NULL,
  PRIMARY KEY (file, line)
) WITHOUT ROWID;
-- Found by a hash of its key: an index of integers costs a first read half what one of the keys would.
${DEDUPE_INDEX};
`;

/** Each agent's folder to read; null or absent: not read (its files turned off). */
export type UsageFolders = Partial<Record<UsageAgent, string | null>>;

/** What the ledger read: files, the lines that may tell of usage (the others are passed over unread), and those skipped (not JSON, or past the line bound). */
export interface LedgerStatus {
  files: number;
  lines: number;
  malformed: number;
  oversized: number;
}

/** Calls summed per quarter hour (a slot: every time zone's offset is a whole number of them), agent, model and group. */
export interface SlotRow {
  slot: number;
  agent: UsageAgent;
  model: string | null;
  /** The session or project, for a report by either; else "". */
  grp: string;
  project: string;
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  extra: number;
  costUsd: number;
  estimatedCalls: number;
  unpricedCalls: number;
  lastAt: number;
}

export const SLOT_MS = 15 * 60_000;

/**
 * Reader threads for a big read, beside this thread, which reads files too between keeping what they
 * send: one a core but this thread's (on two cores, one; a thread more would only share them, and its
 * start and messages cost CPU); and how much to read before one pays for its start.
 */
const READER_THREADS = Math.max(1, os.availableParallelism() - 1);
const THREADS_FROM_BYTES = 64 * 1024 * 1024;
/** The page size of a ledger made anew (SQLite's default is 4 KB): applied only before its first table, kept ever after. */
const PAGE_BYTES = 16 * 1024;
/** A call's values, and how many calls one statement inserts. */
const CALL_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

const ROWS_AT_ONCE = 64;
/** Where a call's row holds its key's hash. */
const DEDUPE_HASH = 15;
/** Files a reader thread read, kept in one transaction. */
const KEPT_TOGETHER = 100;
/** The reader thread's script, beside the bundle this runs from (dist/); absent when the sources run directly: this thread reads. */
const readerThreadFile = () => path.join(/*turbopackIgnore: true*/ __dirname, "usageReaderThread.cjs");

/** A call kept that names itself (its dedupe key): which line, and what picks between it and a copy. */
interface KeptCall {
  key: string;
  file: number;
  line: number;
  sidechain: number;
  total: number;
  path: string;
}

interface FileRow {
  id: number;
  path: string;
  agent: UsageAgent;
  dev: number;
  ino: number;
  offset: number;
  skipping: number;
  state: string;
  lines: number;
  malformed: number;
  oversized: number;
}

export class UsageLedger {
  readonly #db: Database.Database;
  readonly #statements;
  /** During an update of a ledger that held no call naming itself, every one kept since: no copy can be elsewhere. */
  #keptThisUpdate: Map<string, KeptCall> | null = null;
  /** Calls to insert (null: replaced by a later copy before it was); where each call naming itself waits. */
  #pending: (CallRow | null)[] = [];
  readonly #pendingAt = new Map<string, number>();
  /** During a first build that found the ledger empty under its lock: no file has a row yet but those it adds. */
  #emptyBuild = false;

  /** `file`: the ledger's file, made when missing (its folder too); null: kept in memory only (tracking off). */
  constructor(file: string | null) {
    if (file) fs.mkdirSync(path.dirname(file), { recursive: true });
    this.#db = openDatabase(file ?? ":memory:");
    if (file) {
      // A new ledger's pages, before its first table: a first report's index and commit cost less than half the CPU they do on 4 KB pages.
      this.#db.pragma(`page_size = ${PAGE_BYTES}`);
      this.#db.pragma("journal_mode = WAL");
      this.#db.pragma("synchronous = NORMAL");
      this.#db.pragma("busy_timeout = 10000");
      // What SQLite keeps aside while a statement runs (the pages a multi-row insert changes, should it stop
      // part way), in memory: in a temp file, a first report's inserts wrote 158 MB to it, 9,600 pages.
      this.#db.pragma("temp_store = MEMORY");
    }
    this.#db.transaction(() => {
      // The ledger is what the files say, as this release reads and prices them: made by another (its schema or price table), it is read again.
      const hasMeta = this.#db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage_meta'").get() !== undefined;
      const made = hasMeta ? (this.#db.prepare("SELECT value FROM usage_meta WHERE key = 'made by'").get() as { value: string } | undefined)?.value : undefined;
      if (made !== LEDGER_MADE_BY) this.#db.exec("DROP TABLE IF EXISTS usage_calls; DROP TABLE IF EXISTS usage_files; DROP TABLE IF EXISTS usage_meta;");
      this.#db.exec(DDL);
      this.#db.prepare("INSERT OR REPLACE INTO usage_meta VALUES ('made by', ?)").run(LEDGER_MADE_BY);
    })();
    this.#statements = {
      file: this.#db.prepare("SELECT * FROM usage_files WHERE path = ?"),
      addFile: this.#db.prepare(
        "INSERT INTO usage_files (path, agent, dev, ino, offset, skipping, state, lines, malformed, oversized) VALUES (@path, @agent, @dev, @ino, @offset, @skipping, @state, @lines, @malformed, @oversized) ON CONFLICT (path) DO NOTHING RETURNING id",
      ),
      forget: this.#db.prepare("DELETE FROM usage_calls WHERE file = ?"),
      keepFile: this.#db.prepare(
        "UPDATE usage_files SET dev = @dev, ino = @ino, offset = @offset, skipping = @skipping, state = @state, lines = @lines, malformed = @malformed, oversized = @oversized WHERE id = @id",
      ),
      sameCalls: this.#db.prepare(
        "SELECT c.dedupe AS key, c.file, c.line, c.sidechain, c.input + c.output + c.cache_read + c.cache_write AS total, f.path FROM usage_calls c JOIN usage_files f ON f.id = c.file WHERE c.dedupe_hash IN (SELECT value FROM json_each(?))",
      ),
      anyFile: this.#db.prepare("SELECT 1 FROM usage_files LIMIT 1"),
      anyNamed: this.#db.prepare("SELECT 1 FROM usage_calls WHERE dedupe_hash IS NOT NULL LIMIT 1"),
      drop: this.#db.prepare("DELETE FROM usage_calls WHERE file = ? AND line = ?"),
      add: this.#db.prepare(`INSERT OR REPLACE INTO usage_calls VALUES ${CALL_VALUES}`),
      addMany: this.#db.prepare(`INSERT OR REPLACE INTO usage_calls VALUES ${Array.from({ length: ROWS_AT_ONCE }, () => CALL_VALUES).join(", ")}`),
      files: this.#db.prepare("SELECT id, agent, path FROM usage_files"),
      status: this.#db.prepare(
        "SELECT count(*) AS files, coalesce(sum(lines), 0) AS lines, coalesce(sum(malformed), 0) AS malformed, coalesce(sum(oversized), 0) AS oversized FROM usage_files WHERE id IN (SELECT value FROM json_each(?))",
      ),
    };
  }

  /**
   * Read what each agent's files gained since the last update. A big read is shared by a reader
   * thread and this one (each file read whole by one), which keeps what both read, a few files a transaction.
   */
  async update(folders: UsageFolders, bounds: LineBounds = LINE_BOUNDS): Promise<void> {
    const readers: Worker[] = [];
    try {
      await this.#updateWith(readers, folders, bounds);
    } finally {
      // Those not used (one big file), or stopped by an error: none is left waiting.
      for (const worker of readers) void worker.terminate();
    }
  }

  async #updateWith(readers: Worker[], folders: UsageFolders, bounds: LineBounds): Promise<void> {
    const jobs: UsageJob[] = [];
    let bytes = 0;
    const empty = this.#statements.anyFile.get() === undefined;
    // A first report's reader threads start once the files listed are worth them: they load while the rest is listed.
    const threaded = fs.existsSync(readerThreadFile());
    for (const agent of USAGE_AGENTS) {
      const folder = folders[agent];
      if (!folder) continue;
      for (const file of transcriptsOf(folder, USAGE_READERS[agent].files)) {
        const known = empty ? undefined : (this.#statements.file.get(file) as FileRow | undefined);
        let stat: fs.Stats;
        try {
          stat = fs.lstatSync(file);
        } catch {
          continue;
        }
        // Unchanged since it was read to its end: a look costs a stat.
        if (known && known.dev === stat.dev && known.ino === stat.ino && known.offset === stat.size) continue;
        bytes += stat.size - (known?.offset ?? 0);
        jobs.push({
          agent,
          folder,
          path: file,
          from: known ? { dev: known.dev, ino: known.ino, offset: known.offset, skipping: known.skipping === 1, state: known.state } : null,
          bytes: stat.size - (known?.offset ?? 0),
        });
        if (empty && threaded && readers.length === 0 && bytes >= THREADS_FROM_BYTES)
          readers.push(...Array.from({ length: READER_THREADS }, () => new Worker(/*turbopackIgnore: true*/ readerThreadFile())));
      }
    }
    this.#keptThisUpdate = this.#statements.anyNamed.get() === undefined ? new Map() : null;
    const firstBuild = jobs.length > 0 && this.#statements.anyFile.get() === undefined;
    try {
      if (firstBuild) this.#beginFirstBuild();
      if (bytes < THREADS_FROM_BYTES || jobs.length < 2 || !threaded) {
        for (const job of jobs) this.#keepReads([readUsageFile(job, bounds)]);
      } else {
        // The biggest first, each taken by the first thread free: the threads end together, however the files' costs differ.
        jobs.sort((a, b) => b.bytes - a.bytes);
        const next = new Int32Array(new SharedArrayBuffer(4));
        if (readers.length === 0) readers.push(...Array.from({ length: READER_THREADS }, () => new Worker(/*turbopackIgnore: true*/ readerThreadFile())));
        await Promise.all([...readers.map((worker) => this.#readOnThread(worker, jobs, next)), this.#readHere(jobs, next, bounds)]);
      }
      if (firstBuild) this.#endFirstBuild();
    } catch (error) {
      if (firstBuild && this.#db.inTransaction) this.#db.exec("ROLLBACK");
      throw error;
    } finally {
      this.#keptThisUpdate = null;
      this.#emptyBuild = false;
    }
  }

  /**
   * A first build is one transaction: a kill part way leaves the ledger empty, as it was (the next
   * report builds it again), and one commit costs a big first read far less than one every few files.
   * Its calls are indexed by their key once all are in (no call is looked up by it meanwhile: all are
   * in memory), which costs less than keeping the index as each is inserted. Other writers wait on it.
   */
  #beginFirstBuild(): void {
    this.#db.exec("BEGIN IMMEDIATE");
    // Another report may have built it while this one waited for the lock: then what it holds is looked up as usual.
    this.#keptThisUpdate = this.#statements.anyNamed.get() === undefined ? new Map() : null;
    this.#emptyBuild = this.#statements.anyFile.get() === undefined;
    if (this.#emptyBuild) this.#db.exec("DROP INDEX IF EXISTS usage_calls_dedupe");
  }

  #endFirstBuild(): void {
    this.#db.exec(DEDUPE_INDEX);
    this.#db.exec("COMMIT");
  }

  /** This thread reading the jobs `next` points to, like a reader thread, a file at a time: what the threads send is kept in between. */
  async #readHere(jobs: UsageJob[], next: Int32Array, bounds: LineBounds): Promise<void> {
    let reads: (UsageFileRead | null)[] = [];
    for (let i = Atomics.add(next, 0, 1); i < jobs.length; i = Atomics.add(next, 0, 1)) {
      reads.push(readUsageFile(jobs[i]!, bounds));
      if (reads.length >= KEPT_TOGETHER) {
        this.#keepReads(reads);
        reads = [];
      }
      await new Promise(setImmediate);
    }
    this.#keepReads(reads);
  }

  /** A reader thread reading the jobs `next` points to (each thread moves it on as it takes one). */
  #readOnThread(worker: Worker, jobs: UsageJob[], next: Int32Array): Promise<void> {
    return new Promise((resolve, reject) => {
      worker.postMessage({ jobs, next } satisfies ReaderThreadData);
      let done = false;
      // Kept a few files at a time: a transaction each would cost more than the thread saves.
      let reads: (UsageFileRead | null)[] = [];
      worker.on("message", (message: (UsageFileRead | null)[] | "done") => {
        try {
          if (message !== "done") reads.push(...message);
          if (message !== "done" && reads.length < KEPT_TOGETHER) return;
          this.#keepReads(reads);
          reads = [];
        } catch (error) {
          void worker.terminate();
          return reject(error as Error);
        }
        if (message === "done") {
          done = true;
          void worker.terminate();
          resolve();
        }
      });
      worker.on("error", reject);
      worker.on("exit", () => (done ? resolve() : reject(new Error("a usage reader thread stopped before reading its files"))));
    });
  }

  /** Files' reads kept with their new positions (one transaction), each unless another reader (the dashboard, another `reqwatch usage`) read it meanwhile: theirs stand. */
  #keepReads(reads: readonly (UsageFileRead | null)[]): void {
    const keep = () => {
      for (const read of reads) if (read) this.#keepRead(read);
      this.#flush();
    };
    // Within a first build's transaction, directly: a savepoint would copy aside each page it changes first.
    if (this.#db.inTransaction) keep();
    else this.#db.transaction(keep).immediate();
  }

  /** The calls kept so far, inserted: many rows a statement (a big first read inserts tens of thousands). */
  #flush(): void {
    const rows = this.#pending.filter((row) => row !== null);
    // Each row's columns, without the rule between copies that ends it.
    const values = (from: number, to: number) => {
      const out: unknown[] = [];
      for (let r = from; r < to; r++) for (let c = 0; c < CALL_COLUMNS; c++) out.push(rows[r]![c]);
      return out;
    };
    let i = 0;
    for (; i + ROWS_AT_ONCE <= rows.length; i += ROWS_AT_ONCE) this.#statements.addMany.run(values(i, i + ROWS_AT_ONCE));
    for (; i < rows.length; i++) this.#statements.add.run(values(i, i + 1));
    this.#pending = [];
    this.#pendingAt.clear();
  }

  #keepRead(read: UsageFileRead): void {
    const { job, position } = read;
    const now = this.#emptyBuild ? undefined : (this.#statements.file.get(job.path) as FileRow | undefined);
    if (job.from ? !now || now.offset !== job.from.offset || now.ino !== job.from.ino : now !== undefined) return;
    const at = { dev: position.dev, ino: position.ino, offset: position.offset, skipping: position.skipping ? 1 : 0, state: position.state };
    // A new file's row is written whole at once; none when a row for its path came first (the same file listed twice): that stands.
    const row =
      now ??
      (this.#statements.addFile.get({ ...at, path: job.path, agent: job.agent, lines: read.lines, malformed: read.malformed, oversized: read.oversized }) as
        { id: number } | undefined);
    if (!row) return;
    if (now && read.restarted) this.#statements.forget.run(row.id);
    // The calls already kept that this file's lines tell of again, looked up at once (all known here when the ledger held none before this update).
    const keys = this.#keptThisUpdate ? [] : read.calls.flatMap((call) => (call[DEDUPE_HASH] === null ? [] : [call[DEDUPE_HASH]]));
    if (keys.length > 0) this.#flush();
    // Found by their hash, told apart by their key (two keys of one hash are two calls).
    const kept =
      this.#keptThisUpdate ??
      new Map(keys.length === 0 ? [] : (this.#statements.sameCalls.all(JSON.stringify(keys)) as KeptCall[]).map((call) => [call.key, call]));
    for (const call of read.calls) this.#keep({ id: row.id, path: job.path }, call, kept);
    if (!now) return;
    const before = read.restarted ? { lines: 0, malformed: 0, oversized: 0 } : now;
    this.#statements.keepFile.run({
      ...at,
      id: row.id,
      lines: before.lines + read.lines,
      malformed: before.malformed + read.malformed,
      oversized: before.oversized + read.oversized,
    });
  }

  /** One call kept, unless it is a call already kept that its agent wrote again (then the rule its reader names picks one). */
  #keep(file: { id: number; path: string }, call: CallRow, keptCalls: Map<string, KeptCall>): void {
    const [, line, , , , , model, input, output, cacheRead, cacheWrite, extra, agentCost, , key, , sidechain, rule] = call;
    // A line with no tokens and no cost (Claude Code's <synthetic> error: no call was made) counts nowhere.
    if (input + output + cacheRead + cacheWrite + extra === 0 && !agentCost) return;
    if (key !== null && rule !== null) {
      const kept = keptCalls.get(key);
      const total = input + output + cacheRead + cacheWrite;
      if (kept) {
        if (!replaces(rule, { path: file.path, line, sidechain: sidechain === 1, total }, { ...kept, sidechain: kept.sidechain === 1 })) return;
        const waiting = this.#pendingAt.get(key);
        if (waiting !== undefined) this.#pending[waiting] = null;
        else this.#statements.drop.run(kept.file, kept.line);
      }
      keptCalls.set(key, { key, file: file.id, line, sidechain, total, path: file.path });
      this.#pendingAt.set(key, this.#pending.length);
    }
    // With tokens and no model known to the table, its cost is unknown, never $0.
    const cost =
      agentCost ??
      estimateCostUsd({
        model: model ?? undefined,
        inputTokens: input,
        outputTokens: output + extra,
        cacheReadTokens: cacheRead,
        cacheWriteTokens: cacheWrite,
      });
    call[0] = file.id;
    call[12] = cost;
    call[13] = agentCost !== null ? "agent" : cost === null ? null : "table";
    this.#pending.push(call);
  }

  /**
   * The files of these folders the ledger read (one folder an agent): a ledger kept in a cache shared
   * by several homes, or a folder since named elsewhere, reports only what its folders hold or held.
   */
  #filesOf(folders: UsageFolders): string {
    const under = Object.entries(folders).flatMap(([agent, folder]) =>
      folder ? [[agent, folder.endsWith(path.sep) ? folder : folder + path.sep] as const] : [],
    );
    const ids = (this.#statements.files.all() as { id: number; agent: string; path: string }[])
      .filter((file) => under.some(([agent, folder]) => file.agent === agent && file.path.startsWith(folder)))
      .map((file) => file.id);
    return JSON.stringify(ids);
  }

  /** The calls of these folders' files summed per slot, agent, model and, for a report by session or project, that. */
  slots(group: "session" | "project" | null, folders: UsageFolders): SlotRow[] {
    const grp = group ?? "''";
    return this.#db
      .prepare(
        `SELECT at / ${SLOT_MS} AS slot, agent, model, ${grp} AS grp, min(project) AS project, count(*) AS calls, sum(input) AS input, sum(output) AS output,
           sum(cache_read) AS cacheRead, sum(cache_write) AS cacheWrite, sum(extra) AS extra, coalesce(sum(cost), 0) AS costUsd,
           sum(cost_by = 'table') AS estimatedCalls, sum(cost IS NULL) AS unpricedCalls, max(at) AS lastAt
         FROM usage_calls WHERE file IN (SELECT value FROM json_each(?)) GROUP BY 1, 2, 3, 4`,
      )
      .all(this.#filesOf(folders)) as SlotRow[];
  }

  status(folders: UsageFolders): LedgerStatus {
    return this.#statements.status.get(this.#filesOf(folders)) as LedgerStatus;
  }

  close(): void {
    this.#db.close();
  }
}
