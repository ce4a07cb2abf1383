import fs from "node:fs";
import path from "node:path";
import type { StateDir } from "../stateFiles/stateDir";
import { holderFile, liveHolder } from "../process/holderFile";
import type { ProcessIdentity } from "../process/liveness";
import { sleepSync } from "../process/sleepSync";
import { readMeta, type IndexDb } from "../db/openIndex";

/**
 * The follower: one process at a time that watches a folder's requests and keeps its index current
 * (an ingest: `reqwatch follow`, the dashboard, `reqwatch monitor`, `reqwatch mcp`). A command asks
 * it whether the index is current with a sync file, as git's fsmonitor does with its cookies: the
 * command creates `sync-*` in the follower's folder, and the follower's watcher sees that event
 * after every earlier event in requests/ (one inotify queue per process, in order). Having ingested
 * what they named, it removes the file (the index is current) or writes into it (it is not).
 */
const FOLLOWER_DIR = "follower";
const SYNC_PREFIX = "sync-";
/** Written into a sync file the follower cannot vouch for (its index is being rebuilt, or was replaced). */
const NOT_CURRENT = "not current\n";
/** How long a command waits for the follower's answer before it checks every file itself. */
const SYNC_TIMEOUT_MS = 2_000;

export const followerDir = (dir: StateDir) => path.join(dir.storeDir, FOLLOWER_DIR);
const holderPath = (dir: StateDir) => path.join(followerDir(dir), "holder.json");

/** The live process that follows this folder, if any (a holder on another host counts as live). */
export function liveFollower(dir: StateDir): ProcessIdentity | null {
  return liveHolder(holderPath(dir));
}

/**
 * The command's side: true when a live follower says the index holds every change made to
 * requests/ before this call; false when there is none, it says no, or it does not answer in time
 * (the caller then checks every file).
 */
export function syncWithFollower(dir: StateDir): boolean {
  if (!liveFollower(dir)) return false;
  // The pid and a random tail make it unique; Math.random, since loading node:crypto would cost more than the sync.
  const file = path.join(followerDir(dir), `${SYNC_PREFIX}${process.pid}-${Math.random().toString(16).slice(2, 14)}`);
  try {
    fs.writeFileSync(file, "", { flag: "wx" });
  } catch {
    return false;
  }
  const deadline = performance.now() + SYNC_TIMEOUT_MS;
  for (;;) {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) return true;
    if (stat.size > 0 || performance.now() > deadline) break;
    sleepSync(0.5);
  }
  fs.rmSync(file, { force: true });
  return false;
}

/** How often a command looks whether the follower's rebuild is done. */
const REBUILD_POLL_MS = 20;

/**
 * A command that found the index not yet built, while a live follower builds it: wait for that
 * rebuild rather than read every file a second time beside it. False when there is no follower
 * (or it ended before it finished): the caller rebuilds.
 */
export function followerRebuilt(db: IndexDb, dir: StateDir): boolean {
  for (;;) {
    if (readMeta(db, "reconciled_at") !== undefined) return true;
    if (!liveFollower(dir)) return false;
    sleepSync(REBUILD_POLL_MS);
  }
}

export interface SyncServer {
  stop(): void;
}

/**
 * The follower's side, for an ingest whose watcher runs: take the holder file when it is free,
 * then answer each sync file. `catchUp` ingests everything the watcher has queued, now (the sync
 * file's event came after theirs); `current` says whether this process's index is complete and
 * is the one on disk.
 */
export function serveSyncs(dir: StateDir, catchUp: () => void, current: () => boolean, onError: (error: unknown) => void): SyncServer {
  const folder = followerDir(dir);
  fs.mkdirSync(folder, { recursive: true });
  const holder = holderFile(holderPath(dir));
  let holding = false;
  const answer = (name: string) => {
    const file = path.join(folder, name);
    if (!fs.existsSync(file)) return;
    let ok = false;
    try {
      catchUp();
      ok = current();
    } catch (error) {
      onError(error);
    }
    try {
      if (ok) fs.rmSync(file, { force: true });
      else fs.writeFileSync(file, NOT_CURRENT, { flag: "r+" });
    } catch {
      // The command gave up and removed it.
    }
  };
  const watcher = fs.watch(folder, { persistent: false }, (_event, name) => {
    if (holding && name && String(name).startsWith(SYNC_PREFIX)) answer(String(name));
  });
  watcher.on("error", onError);
  // Another follower may hold it now; a later try takes it once that one is gone.
  const tryHold = () => {
    try {
      holding = holder.hold().held;
    } catch (error) {
      onError(error);
    }
  };
  tryHold();
  const retry = setInterval(tryHold, 2_000);
  retry.unref();
  return {
    stop() {
      clearInterval(retry);
      watcher.close();
      if (holding) holder.release();
    },
  };
}
