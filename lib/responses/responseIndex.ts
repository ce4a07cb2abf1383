import fs from "node:fs";
import path from "node:path";
import { withWritersLock } from "../db/writeLock";
import type { TrackerContext } from "../store/context";
import { indexedResponses, recordResponseChange, removeResponse, upsertResponse } from "../db/responseRows";
import { fingerprintOf, sameFingerprint, type FileFingerprint } from "../fs/fingerprint";
import { readResponseFile, responseOfPath } from "../stateFiles/responseFile";

/** A response file is its workspace's and its request's: `<workspace>/<requestId>`. */
const keyOf = (workspace: string, requestId: string) => `${workspace}/${requestId}`;

/**
 * Bring these response files into the index (under the writers' lock): a file's callback
 * delivery, or why it cannot be read; a file gone removes its row. Returns the rows changed.
 */
export function ingestResponseFiles(ctx: TrackerContext, files: readonly string[]): number {
  const ipcDir = ctx.dir.ipcDir;
  if (!ipcDir || !files.length) return 0;
  return withWritersLock(ctx, () => {
    let changed = 0;
    for (const file of files) {
      const named = responseOfPath(ipcDir, file);
      if (!named) continue;
      const read = readResponseFile(file, named.requestId);
      const changedRow = !read
        ? removeResponse(ctx.db, named.requestId, named.workspace)
        : upsertResponse(ctx.db, {
            ...named,
            callbackSuccess: read.status === "ok" && read.response.callback ? (read.response.callback.success ? 1 : 0) : null,
            problem: read.status === "ok" ? null : read.reason,
            fingerprint: read.fingerprint,
          });
      if (changedRow) {
        changed++;
        if (!ctx.rebuilding) recordResponseChange(ctx.db, named.requestId);
      }
    }
    return changed;
  });
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Every response file under the ipc folder (`<workspace>/responses/<id>.json`) with its fingerprint, by `keyOf`. */
function listResponseFiles(ipcDir: string): Map<string, { file: string; workspace: string; requestId: string; fingerprint: FileFingerprint }> {
  const found = new Map<string, { file: string; workspace: string; requestId: string; fingerprint: FileFingerprint }>();
  for (const workspace of listDir(ipcDir)) {
    const dir = path.join(ipcDir, workspace, "responses");
    for (const name of listDir(dir)) {
      const file = path.join(dir, name);
      const named = responseOfPath(ipcDir, file);
      if (!named) continue;
      try {
        found.set(keyOf(named.workspace, named.requestId), { file, ...named, fingerprint: fingerprintOf(fs.lstatSync(file)) });
      } catch {
        // Gone between the listing and the stat.
      }
    }
  }
  return found;
}

/** Bring the index in line with the ipc folder: read what is new or changed, forget what is gone. Returns the rows changed. */
export function reconcileResponses(ctx: TrackerContext): number {
  const ipcDir = ctx.dir.ipcDir;
  // Without an ipc folder now (it went, or only an earlier run named one), no response row stays.
  const onDisk = ipcDir ? listResponseFiles(ipcDir) : new Map<string, never>();
  const indexed = new Map(indexedResponses(ctx.db).map((row) => [keyOf(row.workspace, row.request_id), row]));
  const changed = [...onDisk].filter(([key, { fingerprint }]) => {
    const row = indexed.get(key);
    return !row || !sameFingerprint(row, fingerprint);
  });
  let fixes = ingestResponseFiles(
    ctx,
    changed.map(([, { file }]) => file),
  );
  const gone = [...indexed].filter(([key]) => !onDisk.has(key)).map(([, row]) => row);
  if (gone.length) {
    fixes += withWritersLock(ctx, () => {
      let removed = 0;
      for (const row of gone) {
        if (removeResponse(ctx.db, row.request_id, row.workspace)) removed++;
        if (!ctx.rebuilding) recordResponseChange(ctx.db, row.request_id);
      }
      return removed;
    });
  }
  return fixes;
}
