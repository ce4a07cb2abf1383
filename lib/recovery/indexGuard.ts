import fs from "node:fs";
import type { StateDir } from "../stateFiles/stateDir";
import { fileIdentity, probeIndex, type FileIdentity, type IndexDb } from "../db/openIndex";

const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

type IndexProblem = { kind: "dir-missing"; message: string } | { kind: "deleted" | "replaced" | "corrupt"; message: string };

/**
 * Whether the open index is still the state directory's index.db and still a database. SQLite
 * keeps working on a deleted file (its inode lives on), so without this a server would serve a
 * ghost index while every other process opened a new one. Costs a stat, a 16-byte read and two
 * one-row queries.
 */
export function indexProblem(dir: StateDir, db: IndexDb, identity: FileIdentity | null): IndexProblem | null {
  if (!fs.existsSync(dir.root)) return { kind: "dir-missing", message: `The state directory ${dir.root} is missing; waiting for it to be created again.` };
  const now = fileIdentity(dir.indexFile);
  if (!now) return { kind: "deleted", message: "index.db was deleted" };
  if (!identity || now.ino !== identity.ino || now.dev !== identity.dev) return { kind: "replaced", message: "index.db was replaced by another file" };
  const header = Buffer.alloc(SQLITE_HEADER.length);
  let fd: number | null = null;
  try {
    fd = fs.openSync(dir.indexFile, "r");
    fs.readSync(fd, header, 0, header.length, 0);
  } catch {
    // Unreadable right now (permissions, a race with a delete): the next check says more.
    return null;
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
  if (!header.equals(SQLITE_HEADER)) return { kind: "corrupt", message: "index.db was overwritten: it is not a SQLite database any more" };
  try {
    probeIndex(db);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB") return { kind: "corrupt", message: `index.db is corrupt (${code})` };
    throw error;
  }
  return null;
}

/** What the guard's latest check found and what it did, for the health page. */
export interface IndexGuardStatus {
  /** What is wrong now (the state directory is missing), or null. */
  problem: string | null;
  since: number | null;
  /** Rebuilds of the index while this process ran, and the latest one's cause. */
  rebuilds: number;
  lastRebuild: { at: number; cause: string; durationMs: number } | null;
}

export interface IndexGuardHandle {
  status(): IndexGuardStatus;
  /** Check now (tests; the loop does it every `intervalMs`). */
  checkNow(): void;
  stop(): void;
}

export interface IndexCheck {
  /** What was wrong, or null. */
  problem: IndexProblem | null;
  /** True when the index was reopened (and rebuilt if it had to be). */
  reopened: boolean;
  durationMs: number;
}

/**
 * Check the index every `intervalMs` and have it reopened when it is lost; `onReopened` runs after
 * (the host restarts what watched the old folders).
 */
export function startIndexGuard(
  check: () => IndexCheck,
  options: { intervalMs?: number; now: () => number; onReopened?: (cause: string) => void; onError?: (error: unknown) => void },
): IndexGuardHandle {
  const status: IndexGuardStatus = { problem: null, since: null, rebuilds: 0, lastRebuild: null };
  const run = () => {
    try {
      const result = check();
      if (result.reopened && result.problem) {
        status.rebuilds++;
        status.lastRebuild = { at: options.now(), cause: result.problem.message, durationMs: Math.round(result.durationMs) };
        status.problem = null;
        status.since = null;
        options.onReopened?.(result.problem.message);
      } else if (result.problem) {
        if (status.problem !== result.problem.message) status.since = options.now();
        status.problem = result.problem.message;
      } else {
        status.problem = null;
        status.since = null;
      }
    } catch (error) {
      options.onError?.(error);
    }
  };
  const timer = setInterval(run, options.intervalMs ?? 1000);
  timer.unref();
  return { status: () => ({ ...status, lastRebuild: status.lastRebuild && { ...status.lastRebuild } }), checkNow: run, stop: () => clearInterval(timer) };
}
