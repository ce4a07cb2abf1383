import crypto from "node:crypto";
import path from "node:path";
import type Database from "better-sqlite3";
import { createParser } from "eventsource-parser";
import { formatDuration } from "../model/duration";
import { plural } from "../model/plural";
import { ReqwatchError } from "../model/errors";
import { readRegularFile } from "../fs/readRegularFile";
import type { RequestRecord } from "../model/requestFormat";
import type { State } from "../model/states";
import { openDatabase } from "../sqlite/openDatabase";
import type { SourceDb } from "../sqlite/openSourceDb";
import type { SourceMessage, SourceStep, StuckReason } from "./sourceMessage";
import type { Row, SourceQueue } from "./sourceQueue";

/**
 * claude-mem from v13.4.0 keeps its queue in its worker's memory and says what it holds only over
 * HTTP, on 127.0.0.1 at the port of its settings: `/api/processing-status` (queue depth,
 * processing, parked sessions), `/health` (active sessions, pid), `/api/health` (version, degraded
 * dependencies) and the event stream `/stream` (`processing_status` at each change,
 * `observation_queued` per observation). reqwatch only reads them. What it sees becomes
 * lifecycles: one per busy spell of a worker (work arrived, until the queue is empty again, or the
 * worker stops with work in memory, which claude-mem then loses), kept in reqwatch's own store.
 */

/** Where a claude-mem worker answers, and where that was read. */
export interface WorkerAddress {
  host: string;
  port: number;
  /** The settings file the port came from, or null for claude-mem's default. */
  settings: string | null;
}

/** claude-mem's default port (v13): 37700 plus the user's id modulo 100, so each user of a machine has their own. */
export function defaultWorkerPort(uid = process.getuid?.() ?? 77): number {
  return 37700 + (uid % 100);
}

/** claude-mem's settings are a few lines. */
const MAX_SETTINGS_BYTES = 1024 * 1024;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "0.0.0.0", ""]);

/**
 * The worker's address from claude-mem's settings in its data folder (the folder of its database):
 * `CLAUDE_MEM_WORKER_PORT` and `CLAUDE_MEM_WORKER_HOST`, at the top or under `env`, as claude-mem
 * reads them. reqwatch asks only a worker on this machine.
 */
export function claudeMemWorkerAddress(dataDir: string, uid?: number): WorkerAddress {
  const file = path.join(dataDir, "settings.json");
  let settings: Record<string, unknown> = {};
  let from: string | null = null;
  // Only a small regular file: a FIFO there would freeze the dashboard's one thread.
  const read = readRegularFile(file, { maxBytes: MAX_SETTINGS_BYTES, links: "follow" });
  try {
    if ("text" in read) {
      const parsed = JSON.parse(read.text) as Record<string, unknown>;
      const env = parsed.env;
      settings = env && typeof env === "object" ? (env as Record<string, unknown>) : parsed;
      from = file;
    }
  } catch {
    // Settings that are not JSON: claude-mem itself then runs on its defaults, as without any.
  }
  const rawPort = settings.CLAUDE_MEM_WORKER_PORT;
  const port = typeof rawPort === "number" || typeof rawPort === "string" ? Number(rawPort) : NaN;
  const host = typeof settings.CLAUDE_MEM_WORKER_HOST === "string" ? settings.CLAUDE_MEM_WORKER_HOST.trim() : "";
  if (!LOOPBACK.has(host)) throw new ReqwatchError("BAD_INPUT", `claude-mem source: ${file} puts the worker on ${host}; reqwatch reads only a worker on this machine (127.0.0.1).`, { file });
  const valid = Number.isInteger(port) && port > 0 && port < 65536;
  return { host: host === "::1" ? "::1" : "127.0.0.1", port: valid ? port : defaultWorkerPort(uid), settings: valid ? from : null };
}

export function workerUrl(address: WorkerAddress): string {
  return `http://${address.host === "::1" ? "[::1]" : address.host}:${address.port}`;
}

/** What a worker says about itself at one moment. */
export interface WorkerSnapshot {
  pid: number | null;
  version: string | null;
  queueDepth: number;
  isProcessing: boolean;
  /** Sessions waiting for one of claude-mem's agent slots (its pool is full). */
  parkedSessions: number;
  activeSessions: number;
  /** What the worker reports degraded, each as `dependency: message`. */
  degraded: string[];
}

const count = (value: unknown) => (typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 0);

async function getJson(url: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "error" });
  // /api/health answers 503 with its body when a dependency is down: still an answer.
  const body = (await response.json()) as unknown;
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new Error(`${url} did not answer with a JSON object (HTTP ${response.status})`);
  return body as Record<string, unknown>;
}

/** Ask the worker what it holds; throws WORKER_DOWN-style errors as `WorkerDown` when nothing (or not claude-mem) answers. */
export async function askWorker(address: WorkerAddress, timeoutMs = 2000): Promise<WorkerSnapshot> {
  const base = workerUrl(address);
  let status: Record<string, unknown>;
  let health: Record<string, unknown>;
  let about: Record<string, unknown>;
  try {
    [status, health, about] = await Promise.all([getJson(`${base}/api/processing-status`, timeoutMs), getJson(`${base}/health`, timeoutMs), getJson(`${base}/api/health`, timeoutMs)]);
  } catch (error) {
    throw new WorkerDown(address, error);
  }
  if (typeof status.queueDepth !== "number") throw new WorkerDown(address, new Error(`${base}/api/processing-status has no queueDepth: not a claude-mem v13 worker`));
  const dependencies = about.dependencies as { statuses?: { dependency?: unknown; message?: unknown }[] } | undefined;
  return {
    pid: typeof health.pid === "number" ? health.pid : typeof about.pid === "number" ? about.pid : null,
    version: typeof about.version === "string" ? about.version.slice(0, 32) : null,
    queueDepth: count(status.queueDepth),
    isProcessing: status.isProcessing === true,
    parkedSessions: count(status.parkedSessions),
    activeSessions: count(health.activeSessions),
    degraded: (Array.isArray(dependencies?.statuses) ? dependencies.statuses : [])
      .map((entry) => `${String(entry.dependency ?? "?")}: ${String(entry.message ?? "").split("\n")[0]!.slice(0, 200)}`)
      .slice(0, 5),
  };
}

export class WorkerDown extends Error {
  constructor(
    readonly address: WorkerAddress,
    cause: unknown,
  ) {
    super(`claude-mem's worker is not running: ${whyDown(cause)} on ${workerUrl(address)} (${address.settings ? `the port in ${address.settings}` : "claude-mem's default port"})`, { cause });
  }
}

/** Why a request to the worker failed, in words: fetch's own message is only "fetch failed". */
function whyDown(error: unknown): string {
  const { name, message, cause } = error as { name?: string; message?: string; cause?: { code?: string } };
  if (name === "TimeoutError") return "no answer within 2 s";
  if (cause?.code === "ECONNREFUSED") return "nothing answers";
  if (cause?.code === "ECONNRESET" || cause?.code === "UND_ERR_SOCKET") return "the connection closed mid-answer";
  return message ?? String(error);
}

const DDL = `
CREATE TABLE IF NOT EXISTS spells (
  seq INTEGER PRIMARY KEY,
  pid INTEGER,
  version TEXT,
  state TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  processing_at INTEGER,
  progress_at INTEGER NOT NULL,
  ended_at INTEGER,
  last_at INTEGER NOT NULL,
  depth INTEGER NOT NULL,
  max_depth INTEGER NOT NULL,
  arrived INTEGER NOT NULL,
  done INTEGER NOT NULL,
  parked INTEGER NOT NULL,
  active INTEGER NOT NULL,
  degraded TEXT,
  error TEXT
);
CREATE INDEX IF NOT EXISTS spells_state ON spells (state);
CREATE TABLE IF NOT EXISTS steps (seq INTEGER NOT NULL, at INTEGER NOT NULL, n INTEGER NOT NULL, name TEXT NOT NULL, summary TEXT NOT NULL, detail TEXT NOT NULL, PRIMARY KEY (seq, n)) WITHOUT ROWID;
`;

/** A spell keeps at most this many steps (each a change of the queue): the first ones and the latest say the story. */
const MAX_STEPS = 500;
/** Spells that ended this long ago are removed. */
const KEEP_MS = 7 * 86_400_000;

type SpellRow = { seq: number; pid: number | null; state: string; depth: number; arrived: number; done: number; processing_at: number | null; degraded: string | null; parked: number; active: number };

/** An observation of the worker: what it said, or that it did not answer. */
export type WorkerObservation = { snapshot: WorkerSnapshot } | { down: string };

/**
 * The spells reqwatch saw, in its own SQLite file (beside its index, never in claude-mem's
 * folder): one writer, the dashboard's watch; the source reads it like any table.
 */
export class WorkerSpellStore {
  private readonly db: Database.Database;
  /** Observations queued since the last look, from the event stream. */
  private arrivals = 0;

  constructor(readonly file: string) {
    this.db = openDatabase(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(DDL);
  }

  /** The stream said an observation was queued: counted into the next look, so work done while more arrives is seen as progress. */
  arrived(): void {
    this.arrivals++;
  }

  /** Apply one look at the worker; true when a spell changed. */
  observe(observation: WorkerObservation, now = Date.now()): boolean {
    const arrivals = this.arrivals;
    this.arrivals = 0;
    return this.db.transaction(() => {
      let live = this.db.prepare("SELECT * FROM spells WHERE state IN ('queued', 'processing') ORDER BY seq DESC LIMIT 1").get() as SpellRow | undefined;
      if ("down" in observation) {
        if (!live) return false;
        this.end(live, now, "failed", `claude-mem's worker${live.pid ? ` (pid ${live.pid})` : ""} stopped with ${live.depth} observation${live.depth === 1 ? "" : "s"} in its queue; claude-mem keeps the queue in memory, so they were lost`, "worker stopped", { reason: observation.down });
        return true;
      }
      const snap = observation.snapshot;
      let changed = false;
      if (live && snap.pid !== null && live.pid !== null && live.pid !== snap.pid) {
        this.end(live, now, "failed", `claude-mem's worker pid ${live.pid} was replaced by pid ${snap.pid} with ${live.depth} observation${live.depth === 1 ? "" : "s"} in its queue; claude-mem keeps the queue in memory, so they were lost`, "worker replaced", { pid: snap.pid });
        live = undefined;
        changed = true;
      }
      const degraded = snap.degraded.length ? snap.degraded.join("; ") : null;
      const state: State = snap.isProcessing ? "processing" : "queued";
      if (!live) {
        if (snap.queueDepth === 0) return changed;
        const seq = Number(
          this.db
            .prepare("INSERT INTO spells (pid, version, state, started_at, processing_at, progress_at, last_at, depth, max_depth, arrived, done, parked, active, degraded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)")
            .run(snap.pid, snap.version, state, now, snap.isProcessing ? now : null, now, now, snap.queueDepth, snap.queueDepth, snap.queueDepth, snap.parkedSessions, snap.activeSessions, degraded).lastInsertRowid,
        );
        this.step(seq, now, "queued", `${snap.queueDepth} observation${snap.queueDepth === 1 ? "" : "s"} in the queue`, { depth: snap.queueDepth, processing: snap.isProcessing, pid: snap.pid, version: snap.version });
        return true;
      }
      // What left the queue: what it held, plus what arrived since, minus what it holds now.
      const done = Math.max(0, live.depth + arrivals - snap.queueDepth);
      if (snap.queueDepth === 0) {
        this.db.prepare("UPDATE spells SET done = done + ?, depth = 0, progress_at = ? WHERE seq = ?").run(done, now, live.seq);
        this.end({ ...live, depth: 0 }, now, "completed", null, "queue empty", { done: live.done + done });
        return true;
      }
      const same = live.depth === snap.queueDepth && live.state === state && done === 0 && arrivals === 0 && live.degraded === degraded && live.parked === snap.parkedSessions && live.active === snap.activeSessions;
      if (same) return changed;
      this.db
        .prepare(
          `UPDATE spells SET state = ?, processing_at = coalesce(processing_at, ?), progress_at = CASE WHEN ? > 0 THEN ? ELSE progress_at END, last_at = ?, depth = ?, max_depth = max(max_depth, ?),
           arrived = arrived + ?, done = done + ?, parked = ?, active = ?, degraded = ?, version = coalesce(?, version) WHERE seq = ?`,
        )
        .run(state, snap.isProcessing ? now : null, done, now, now, snap.queueDepth, snap.queueDepth, arrivals, done, snap.parkedSessions, snap.activeSessions, degraded, snap.version, live.seq);
      if (live.depth !== snap.queueDepth || live.state !== state || done > 0) {
        const what = [`queue ${live.depth} → ${snap.queueDepth}`, done > 0 && `${done} done`, arrivals > 0 && `${arrivals} arrived`, snap.isProcessing ? "processing" : "not processing"].filter(Boolean).join(", ");
        this.step(live.seq, now, done > 0 ? "progress" : "waiting", what, { depth: snap.queueDepth, done, arrived: arrivals, processing: snap.isProcessing, parked: snap.parkedSessions });
      }
      return true;
    })();
  }

  /** Remove the spells that ended long ago. */
  trim(now = Date.now()): number {
    return this.db.transaction(() => {
      const old = this.db.prepare("SELECT seq FROM spells WHERE ended_at IS NOT NULL AND ended_at < ?").pluck().all(now - KEEP_MS) as number[];
      for (const seq of old) {
        this.db.prepare("DELETE FROM steps WHERE seq = ?").run(seq);
        this.db.prepare("DELETE FROM spells WHERE seq = ?").run(seq);
      }
      return old.length;
    })();
  }

  close(): void {
    this.db.close();
  }

  private end(live: SpellRow, now: number, state: "completed" | "failed", error: string | null, name: string, detail: Record<string, unknown>): void {
    this.db.prepare("UPDATE spells SET state = ?, ended_at = ?, last_at = ?, error = ? WHERE seq = ?").run(state, now, now, error, live.seq);
    this.step(live.seq, now, name, error ?? `every observation left the queue`, detail);
  }

  private step(seq: number, at: number, name: string, summary: string, detail: Record<string, unknown>): void {
    const n = this.db.prepare("SELECT count(*) FROM steps WHERE seq = ?").pluck().get(seq) as number;
    // Past the cap, the newest replaces the last kept: the first steps and the latest stay.
    if (n >= MAX_STEPS) this.db.prepare("DELETE FROM steps WHERE seq = ? AND n = ?").run(seq, n - 1);
    this.db.prepare("INSERT INTO steps (seq, at, n, name, summary, detail) VALUES (?, ?, ?, ?, ?, ?)").run(seq, at, Math.min(n, MAX_STEPS - 1), name, summary, JSON.stringify(detail));
  }
}

/** The file of the spells reqwatch keeps for one claude-mem database, in `storeDir` (the index's folder). */
export function workerStoreFile(storeDir: string, claudeMemFile: string): string {
  return path.join(storeDir, `claude-mem-worker-${crypto.createHash("sha256").update(path.resolve(claudeMemFile)).digest("hex").slice(0, 12)}.db`);
}

/** What the source shows of the worker beside its spells. */
export interface WorkerStatus {
  url: string;
  /** Where the port came from: claude-mem's settings file, or null for its default. */
  settings: string | null;
  running: boolean;
  /** Why it cannot be asked, when it is not running. */
  error: string | null;
  snapshot: WorkerSnapshot | null;
  /** When it last answered. */
  seenAt: number | null;
}

/** Ask the worker once, as the source shows it: what it holds, or why it could not be asked (`seenAt`: when it last answered). */
export async function workerStatus(address: WorkerAddress, seenAt: number | null = null): Promise<WorkerStatus> {
  const asked = { url: workerUrl(address), settings: address.settings };
  try {
    return { ...asked, running: true, error: null, snapshot: await askWorker(address), seenAt: Date.now() };
  } catch (error) {
    return { ...asked, running: false, error: (error as Error).message, snapshot: null, seenAt };
  }
}

/** A look this often, and at once when the stream says the queue changed. */
const LOOK_MS = 1000;

/**
 * Follows one worker while the dashboard runs: its event stream for changes as they happen, a look
 * every second besides (the stream may be down, or miss what happened while reconnecting), each
 * look written to the spell store. Reads only: GET requests to 127.0.0.1.
 */
export class ClaudeMemWorkerWatch {
  readonly store: WorkerSpellStore;
  private status_: WorkerStatus;
  private timer: NodeJS.Timeout | null = null;
  private stream: AbortController | null = null;
  private looking: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(
    readonly address: WorkerAddress,
    storeFile: string,
  ) {
    this.store = new WorkerSpellStore(storeFile);
    this.status_ = { url: workerUrl(address), settings: address.settings, running: false, error: null, snapshot: null, seenAt: null };
  }

  start(): void {
    if (this.timer || this.closed) return;
    this.store.trim();
    void this.look();
    this.timer = setInterval(() => void this.look(), LOOK_MS);
    this.timer.unref();
  }

  status(): WorkerStatus {
    return this.status_;
  }

  /** One look now (or right after the one under way). Resolves when it is written. */
  look(): Promise<void> {
    if (this.looking) {
      this.again = true;
      return this.looking;
    }
    this.looking = (async () => {
      do {
        this.again = false;
        await this.lookOnce();
      } while (this.again && !this.closed);
    })().finally(() => (this.looking = null));
    return this.looking;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stream?.abort();
    await this.looking?.catch(() => {});
    this.store.close();
  }

  private async lookOnce(): Promise<void> {
    const status = await workerStatus(this.address, this.status_.seenAt);
    this.status_ = status;
    if (status.snapshot && !this.stream) this.follow();
    if (this.closed) return;
    try {
      this.store.observe(status.snapshot ? { snapshot: status.snapshot } : { down: status.error ?? "not running" });
    } catch (error) {
      this.status_ = { ...status, error: `reqwatch cannot keep what it saw: ${(error as Error).message}` };
    }
  }

  /** The worker's event stream: each queue change triggers a look, each queued observation is counted. Ends when the worker does. */
  private follow(): void {
    const controller = new AbortController();
    this.stream = controller;
    void (async () => {
      try {
        const response = await fetch(`${this.status_.url}/stream`, { signal: controller.signal, headers: { accept: "text/event-stream" } });
        if (!response.ok || !response.body) return;
        const parser = createParser({
          onEvent: (event) => {
            let type: unknown;
            try {
              type = (JSON.parse(event.data) as { type?: unknown }).type;
            } catch {
              return;
            }
            if (type === "observation_queued") this.store.arrived();
            if (type === "processing_status" || type === "session_completed") void this.look();
          },
        });
        const decoder = new TextDecoder();
        const reader = response.body.getReader();
        for (let read = await reader.read(); !read.done; read = await reader.read()) parser.feed(decoder.decode(read.value, { stream: true }));
      } catch {
        // The worker went away or we closed: the next look says which.
      } finally {
        if (this.stream === controller) this.stream = null;
      }
    })();
  }
}

/** claude-mem's own stuck limit for work in progress, applied to a queue that does not go down. */
export const WORKER_STUCK_AFTER_MS = 5 * 60_000;

const ID = /^claude-mem-queue-(\d{1,18})$/;
const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/** The spells as a source queue: `claude-mem-queue-<n>`, newest first, stuck when the queue does not go down for claude-mem's own limit. */
export function claudeMemWorkerQueue(file: string, stuckAfterMs = WORKER_STUCK_AFTER_MS): SourceQueue {
  return {
    kind: "claude-mem",
    file,
    table: "spells",
    keptByReqwatch: true,
    from: "spells t",
    select: "t.pid, t.version, t.state, t.started_at, t.processing_at, t.progress_at, t.ended_at, t.last_at, t.depth, t.max_depth, t.arrived, t.done, t.parked, t.active, t.degraded, t.error",
    id: "t.seq",
    status: "t.state",
    statusValues: { queued: "queued", processing: "processing", completed: "completed", failed: "failed" },
    created: "t.started_at",
    times: ["t.last_at"],
    workspace: "'claude-mem'",
    session: null,
    text: ["t.error", "t.degraded"],
    rowId: (requestId) => ID.exec(requestId)?.[1] ?? null,
    requestId: (row) => `claude-mem-queue-${String(row._id)}`,
    // Its rows are small, and what a stuck spell says reads most of them.
    facts: "t.state, t.started_at, t.progress_at, t.depth, t.done, t.parked, t.degraded",
    settled: [],
    stuck: (row, now) => spellStuck(row, now, stuckAfterMs),
    toMessage: (row, now) => spellMessage(row, now, stuckAfterMs),
    details: (db, rowId) => spellSteps(db, rowId),
  };
}

function spellMessage(row: Row, now: number, stuckAfterMs: number): SourceMessage {
  const state = row.state as State;
  const startedAt = num(row.started_at) ?? 0;
  const depth = num(row.depth) ?? 0;
  const endedAt = num(row.ended_at);
  const done = num(row.done) ?? 0;
  const live = state === "queued" || state === "processing";
  const request: RequestRecord = {
    requestId: `claude-mem-queue-${String(row._id)}`,
    workspace: "claude-mem",
    state,
    createdAt: startedAt,
    queuedAt: startedAt,
    ...(num(row.processing_at) !== undefined && { processingStartedAt: num(row.processing_at) }),
    ...(endedAt !== undefined && !live && { completedAt: endedAt }),
    lastUpdatedAt: num(row.last_at) ?? startedAt,
    prompt: `claude-mem worker queue${row.pid ? ` (pid ${String(row.pid)}${row.version ? `, v${String(row.version)}` : ""})` : ""}: up to ${plural(num(row.max_depth) ?? depth, "observation")}`,
    ...(typeof row.error === "string" && { error: row.error }),
  };
  const stuck = spellStuck(row, now, stuckAfterMs)?.() ?? null;
  const note = live ? [`${depth} waiting`, state === "processing" ? "processing" : "not processing", done && `${done} done`, plural(num(row.active) ?? 0, "active session")].filter(Boolean).join(", ") : `${done} done`;
  return { request, stuck, note };
}

/** A spell still going on is stuck when the queue has not gone down for `stuckAfterMs`. */
function spellStuck(row: Row, now: number, stuckAfterMs: number): StuckReason {
  const state = row.state as State;
  const depth = num(row.depth) ?? 0;
  const waited = now - (num(row.progress_at) ?? num(row.started_at) ?? 0);
  const done = num(row.done) ?? 0;
  if (!(state === "queued" || state === "processing") || waited < stuckAfterMs) return null;
  return () =>
    [
      `${plural(depth, "observation")} waiting ${formatDuration(waited)} with no progress (${done ? `the queue last went down ${formatDuration(waited)} ago` : "none has left the queue since it filled"})`,
      num(row.parked) ? `${plural(num(row.parked)!, "session")} parked, waiting for an agent slot` : null,
      typeof row.degraded === "string" ? `claude-mem reports ${row.degraded}` : null,
      "they are in the worker's memory only: stopping it loses them",
    ]
      .filter(Boolean)
      .join("; ");
}

function spellSteps(db: SourceDb, rowId: string): Pick<SourceMessage, "steps"> {
  const steps = db.prepare("SELECT at, name, summary, detail FROM steps WHERE seq = ? ORDER BY n").all(rowId) as { at: number; name: string; summary: string; detail: string }[];
  return { steps: steps.map((step): SourceStep => ({ at: step.at, name: step.name, summary: step.summary, detail: JSON.parse(step.detail) as SourceStep["detail"] })) };
}
