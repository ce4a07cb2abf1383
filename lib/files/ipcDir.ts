import fs from "node:fs";
import path from "node:path";

/**
 * The gateway's ipc folder, where its stop hook writes response files: the one named (an option or
 * REQWATCH_IPC_DIR), else `ipc/` beside the state folder when it exists (a gateway in the common layout keeps
 * `data/state` and `data/ipc`), else none.
 */
export function resolveIpcDir(named: string | undefined, stateRoot: string): string | null {
  if (named) return path.resolve(/*turbopackIgnore: true*/ named);
  const beside = path.join(/*turbopackIgnore: true*/ path.dirname(stateRoot), "ipc");
  try {
    return fs.statSync(beside).isDirectory() ? beside : null;
  } catch {
    return null;
  }
}
