import fs from "node:fs";
import path from "node:path";
import { assertRequestId } from "../model/ids";

const DEFAULT_STATE_DIR = ".reqwatch";
export const STATE_DIR_ENV = "REQWATCH_STATE_DIR";

/** The state directory's layout. Every path lib builds goes through here, after id validation. */
export interface StateDir {
  readonly root: string;
  readonly requestsDir: string;
  readonly sessionsDir: string;
  /** Result markers: a worker's result, written before it reports, so a crash in between loses nothing. */
  readonly resultsDir: string;
  /** One file per paused workspace (lib/stateFiles/pauseFile.ts): claims take nothing from it. */
  readonly pausedDir: string;
  /**
   * Where reqwatch keeps its own files (index.db, archive.db): the state directory itself when
   * reqwatch manages it, a folder under the user's cache directory when it only observes it.
   */
  readonly storeDir: string;
  /** Where a gateway's response files are (lib/stateFiles/ipcDir.ts), read and never written; it may not exist (yet). Null in a tracker that reads none. */
  readonly ipcDir: string | null;
  readonly indexFile: string;
  readonly archiveFile: string;
  requestFile(requestId: string): string;
}

/** `explicit` (an option or `--state-dir`), else `REQWATCH_STATE_DIR`, else `./.reqwatch`. */
export function resolveStateDirPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  // The state directory is chosen at run time; tell Next's file tracer not to trace the project for it.
  return path.resolve(/*turbopackIgnore: true*/ explicit || env[STATE_DIR_ENV] || DEFAULT_STATE_DIR);
}

export function stateDirAt(root: string, storeDir: string = root, ipcDir: string | null = null): StateDir {
  const absolute = path.resolve(/*turbopackIgnore: true*/ root);
  const store = path.resolve(/*turbopackIgnore: true*/ storeDir);
  const requestsDir = path.join(absolute, "requests");
  return {
    root: absolute,
    requestsDir,
    sessionsDir: path.join(absolute, "sessions"),
    resultsDir: path.join(absolute, "results"),
    pausedDir: path.join(absolute, "paused"),
    storeDir: store,
    ipcDir,
    indexFile: path.join(store, "index.db"),
    archiveFile: path.join(store, "archive.db"),
    requestFile(requestId: string) {
      assertRequestId(requestId);
      return path.join(requestsDir, `${requestId}.json`);
    },
  };
}

/** Make the folders reqwatch writes into: all of them in a folder it manages, only its store (private) for one it observes. */
export function ensureStateDir(dir: StateDir): void {
  if (dir.storeDir !== dir.root) {
    // The index of an observed folder holds its requests' text: private to this user, whatever the folder's own permissions.
    fs.mkdirSync(dir.storeDir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dir.storeDir, 0o700);
    return;
  }
  fs.mkdirSync(dir.requestsDir, { recursive: true });
  fs.mkdirSync(dir.sessionsDir, { recursive: true });
  fs.mkdirSync(dir.resultsDir, { recursive: true });
}

/**
 * A folder of fewer request files than this is indexed, or caught up with, at open even when the
 * dashboard asks for it in the background: that takes a fraction of a second.
 */
export const BACKGROUND_FROM_FILES = 2000;

/** Whether a folder holds at least `n` entries, read no further than that. */
export function holdsAtLeast(folder: string, n: number): boolean {
  let dir: fs.Dir;
  try {
    dir = fs.opendirSync(folder);
  } catch {
    return false;
  }
  try {
    let seen = 0;
    while (seen < n && dir.readSync()) seen++;
    return seen >= n;
  } finally {
    dir.closeSync();
  }
}
