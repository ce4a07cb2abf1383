import fs from "node:fs";
import path from "node:path";

/**
 * Where a gateway's stop hook writes response files: the folder named (an option or REQWATCH_IPC_DIR),
 * else `ipc/` beside the state folder (a gateway in the common layout keeps `data/state` and `data/ipc`).
 * It may not exist yet: a fresh gateway's first stop hook creates it, and it is followed from then on.
 */
export function resolveIpcDir(named: string | undefined, stateRoot: string): string {
  if (named) return path.resolve(/*turbopackIgnore: true*/ named);
  return path.join(/*turbopackIgnore: true*/ path.dirname(stateRoot), "ipc");
}

/** Whether the ipc folder is there now (a page that shows no response section for a tracker without a gateway asks). */
export function ipcDirExists(ipcDir: string | null): ipcDir is string {
  if (!ipcDir) return false;
  try {
    return fs.statSync(ipcDir).isDirectory();
  } catch {
    return false;
  }
}
