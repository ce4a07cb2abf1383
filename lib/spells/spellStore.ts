import crypto from "node:crypto";
import path from "node:path";
import type Database from "better-sqlite3";
import type { State } from "../model/states";
import { openDatabase } from "../sqlite/openDatabase";
import type { SourceDb } from "../sqlite/openSourceDb";

/**
 * What reqwatch saw of a claude-mem worker (from v13.4.0 it keeps its queue in memory), kept in
 * reqwatch's own SQLite file: one lifecycle per busy spell of the worker. The dashboard's watch
 * writes through `WorkerSpellStore` alone; the source's queue (lib/sources/claudeMemWorkerQueue.ts)
 * reads the `spells` table's columns, and a spell's steps with `spellSteps`.
 */

/** What a worker says about itself at one moment (defined here, below the client that asks, because this store keeps it). */
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

type SpellRow = {
  seq: number;
  pid: number | null;
  state: string;
  depth: number;
  arrived: number;
  done: number;
  processing_at: number | null;
  degraded: string | null;
  parked: number;
  active: number;
};

/** An observation of the worker: what it said, or that it did not answer. */
export type WorkerObservation = { snapshot: WorkerSnapshot } | { down: string };

/** A look's state and degradations as a spell's row holds them. */
function spellFieldsOf(snap: WorkerSnapshot): { degraded: string | null; state: State } {
  return { degraded: snap.degraded.length ? snap.degraded.join("; ") : null, state: snap.isProcessing ? "processing" : "queued" };
}

/**
 * The spells reqwatch saw, in its own SQLite file (beside its index, never in claude-mem's
 * folder): one writer, the dashboard's watch; the source reads it like any table.
 */
export class WorkerSpellStore {
  readonly #db: Database.Database;
  /** Observations queued since the last look, from the event stream. */
  #arrivals = 0;

  constructor(readonly file: string) {
    this.#db = openDatabase(file);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("busy_timeout = 5000");
    this.#db.exec(DDL);
  }

  /** The stream said an observation was queued: counted into the next look, so work done while more arrives is seen as progress. */
  arrived(): void {
    this.#arrivals++;
  }

  /** Apply one look at the worker; true when a spell changed. */
  observe(observation: WorkerObservation, now = Date.now()): boolean {
    const arrivals = this.#arrivals;
    this.#arrivals = 0;
    return this.#db.transaction(() => {
      let live = this.#db.prepare("SELECT * FROM spells WHERE state IN ('queued', 'processing') ORDER BY seq DESC LIMIT 1").get() as SpellRow | undefined;
      if ("down" in observation) {
        if (!live) return false;
        this.#end(
          live,
          now,
          "failed",
          `claude-mem's worker${live.pid ? ` (pid ${live.pid})` : ""} stopped with ${live.depth} observation${live.depth === 1 ? "" : "s"} in its queue; claude-mem keeps the queue in memory, so they were lost`,
          "worker stopped",
          { reason: observation.down },
        );
        return true;
      }
      const snap = observation.snapshot;
      let changed = false;
      if (live && snap.pid !== null && live.pid !== null && live.pid !== snap.pid) {
        this.#end(
          live,
          now,
          "failed",
          `claude-mem's worker pid ${live.pid} was replaced by pid ${snap.pid} with ${live.depth} observation${live.depth === 1 ? "" : "s"} in its queue; claude-mem keeps the queue in memory, so they were lost`,
          "worker replaced",
          { pid: snap.pid },
        );
        live = undefined;
        changed = true;
      }
      if (!live) {
        if (snap.queueDepth === 0) return changed;
        this.#begin(snap, now);
        return true;
      }
      // A replaced worker's spell ended above: here the spell is the same worker's.
      return this.#advance(live, snap, arrivals, now);
    })();
  }

  /** A queue seen where no spell is live: a spell begins. */
  #begin(snap: WorkerSnapshot, now: number): void {
    const { degraded, state } = spellFieldsOf(snap);
    const seq = Number(
      this.#db
        .prepare(
          "INSERT INTO spells (pid, version, state, started_at, processing_at, progress_at, last_at, depth, max_depth, arrived, done, parked, active, degraded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
        )
        .run(
          snap.pid,
          snap.version,
          state,
          now,
          snap.isProcessing ? now : null,
          now,
          now,
          snap.queueDepth,
          snap.queueDepth,
          snap.queueDepth,
          snap.parkedSessions,
          snap.activeSessions,
          degraded,
        ).lastInsertRowid,
    );
    this.#step(seq, now, "queued", `${snap.queueDepth} observation${snap.queueDepth === 1 ? "" : "s"} in the queue`, {
      depth: snap.queueDepth,
      processing: snap.isProcessing,
      pid: snap.pid,
      version: snap.version,
    });
  }

  /** The live spell, as the worker's queue is now: what left it, what arrived, whether it is still processing; true when it changed. */
  #advance(live: SpellRow, snap: WorkerSnapshot, arrivals: number, now: number): boolean {
    const { degraded, state } = spellFieldsOf(snap);
    // What left the queue: what it held, plus what arrived since, minus what it holds now.
    const done = Math.max(0, live.depth + arrivals - snap.queueDepth);
    if (snap.queueDepth === 0) {
      this.#db.prepare("UPDATE spells SET done = done + ?, depth = 0, progress_at = ? WHERE seq = ?").run(done, now, live.seq);
      this.#end({ ...live, depth: 0 }, now, "completed", null, "queue empty", { done: live.done + done });
      return true;
    }
    const same =
      live.depth === snap.queueDepth &&
      live.state === state &&
      done === 0 &&
      arrivals === 0 &&
      live.degraded === degraded &&
      live.parked === snap.parkedSessions &&
      live.active === snap.activeSessions;
    if (same) return false;
    this.#db
      .prepare(
        `UPDATE spells SET state = ?, processing_at = coalesce(processing_at, ?), progress_at = CASE WHEN ? > 0 THEN ? ELSE progress_at END, last_at = ?, depth = ?, max_depth = max(max_depth, ?),
         arrived = arrived + ?, done = done + ?, parked = ?, active = ?, degraded = ?, version = coalesce(?, version) WHERE seq = ?`,
      )
      .run(
        state,
        snap.isProcessing ? now : null,
        done,
        now,
        now,
        snap.queueDepth,
        snap.queueDepth,
        arrivals,
        done,
        snap.parkedSessions,
        snap.activeSessions,
        degraded,
        snap.version,
        live.seq,
      );
    if (live.depth !== snap.queueDepth || live.state !== state || done > 0) {
      const what = [
        `queue ${live.depth} → ${snap.queueDepth}`,
        done > 0 && `${done} done`,
        arrivals > 0 && `${arrivals} arrived`,
        snap.isProcessing ? "processing" : "not processing",
      ]
        .filter(Boolean)
        .join(", ");
      this.#step(live.seq, now, done > 0 ? "progress" : "waiting", what, {
        depth: snap.queueDepth,
        done,
        arrived: arrivals,
        processing: snap.isProcessing,
        parked: snap.parkedSessions,
      });
    }
    return true;
  }

  /** Remove the spells that ended long ago. */
  trim(now = Date.now()): number {
    return this.#db.transaction(() => {
      const old = this.#db
        .prepare("SELECT seq FROM spells WHERE ended_at IS NOT NULL AND ended_at < ?")
        .pluck()
        .all(now - KEEP_MS) as number[];
      for (const seq of old) {
        this.#db.prepare("DELETE FROM steps WHERE seq = ?").run(seq);
        this.#db.prepare("DELETE FROM spells WHERE seq = ?").run(seq);
      }
      return old.length;
    })();
  }

  close(): void {
    this.#db.close();
  }

  #end(live: SpellRow, now: number, state: "completed" | "failed", error: string | null, name: string, detail: Record<string, unknown>): void {
    this.#db.prepare("UPDATE spells SET state = ?, ended_at = ?, last_at = ?, error = ? WHERE seq = ?").run(state, now, now, error, live.seq);
    this.#step(live.seq, now, name, error ?? `every observation left the queue`, detail);
  }

  #step(seq: number, at: number, name: string, summary: string, detail: Record<string, unknown>): void {
    const n = this.#db.prepare("SELECT count(*) FROM steps WHERE seq = ?").pluck().get(seq) as number;
    // Past the cap, the newest replaces the last kept: the first steps and the latest stay.
    if (n >= MAX_STEPS) this.#db.prepare("DELETE FROM steps WHERE seq = ? AND n = ?").run(seq, n - 1);
    this.#db
      .prepare("INSERT INTO steps (seq, at, n, name, summary, detail) VALUES (?, ?, ?, ?, ?, ?)")
      .run(seq, at, Math.min(n, MAX_STEPS - 1), name, summary, JSON.stringify(detail));
  }
}

/** The file of the spells reqwatch keeps for one claude-mem database, in `storeDir` (the index's folder). */
export function workerStoreFile(storeDir: string, claudeMemFile: string): string {
  return path.join(storeDir, `claude-mem-worker-${crypto.createHash("sha256").update(path.resolve(claudeMemFile)).digest("hex").slice(0, 12)}.db`);
}

/** One spell's steps, oldest first, read on a connection the reader opened (read-only). */
export function spellSteps(db: SourceDb, seq: string): { at: number; name: string; summary: string; detail: Record<string, unknown> }[] {
  const steps = db.prepare("SELECT at, name, summary, detail FROM steps WHERE seq = ? ORDER BY n").all(seq) as {
    at: number;
    name: string;
    summary: string;
    detail: string;
  }[];
  return steps.map((step) => ({ ...step, detail: JSON.parse(step.detail) as Record<string, unknown> }));
}
