import fs from "node:fs";
import path from "node:path";
import { withWritersLock } from "../commitChange";
import type { TrackerContext } from "../context";
import type { IndexDb } from "../index/openIndex";
import { statement } from "../index/statements";
import { recordChange } from "../feed/changes";
import { fingerprintOf, sameFingerprint, type FileFingerprint } from "../requestFile";
import { readResponseFile, responseOfPath } from "./responseFile";

interface Indexed extends FileFingerprint {
  request_id: string;
  workspace: string;
}

/** A response file is its workspace's and its request's: `<workspace>/<requestId>`. */
const keyOf = (workspace: string, requestId: string) => `${workspace}/${requestId}`;

/** A response change reaches the feed (the feed's own append, trim included), so an open request page shows it and a "callback failed" view refetches. */
function recordResponseChange(db: IndexDb, requestId: string): void {
  recordChange(db, "response.changed", requestId, null, Date.now());
}

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
      let result;
      if (!read) {
        result = statement(ctx.db, "DELETE FROM responses WHERE request_id = ? AND workspace = ?").run(named.requestId, named.workspace);
      } else {
        const callback = read.status === "ok" && read.response.callback ? (read.response.callback.success ? 1 : 0) : null;
        const problem = read.status === "ok" ? null : read.reason;
        const fingerprint = read.fingerprint;
        result = statement(
          ctx.db,
          `INSERT INTO responses (request_id, workspace, callback_success, problem, file_mtime_ms, file_size, file_ino) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(request_id, workspace) DO UPDATE SET callback_success = excluded.callback_success, problem = excluded.problem,
             file_mtime_ms = excluded.file_mtime_ms, file_size = excluded.file_size, file_ino = excluded.file_ino
           WHERE responses.file_mtime_ms IS NOT excluded.file_mtime_ms OR responses.file_size IS NOT excluded.file_size OR responses.file_ino IS NOT excluded.file_ino`,
        ).run(named.requestId, named.workspace, callback, problem, fingerprint?.mtimeMs ?? null, fingerprint?.size ?? null, fingerprint?.ino ?? null);
      }
      if (result.changes > 0) {
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
  if (!ipcDir) return 0;
  const onDisk = listResponseFiles(ipcDir);
  const indexed = new Map(
    (statement(ctx.db, "SELECT request_id, workspace, file_mtime_ms AS mtimeMs, file_size AS size, file_ino AS ino FROM responses").all() as Indexed[]).map((row) => [
      keyOf(row.workspace, row.request_id),
      row,
    ]),
  );
  const changed = [...onDisk].filter(([key, { fingerprint }]) => {
    const row = indexed.get(key);
    return !row || !sameFingerprint(row, fingerprint);
  });
  let fixes = ingestResponseFiles(ctx, changed.map(([, { file }]) => file));
  const gone = [...indexed].filter(([key]) => !onDisk.has(key)).map(([, row]) => row);
  if (gone.length) {
    fixes += withWritersLock(ctx, () => {
      let removed = 0;
      for (const row of gone) {
        removed += statement(ctx.db, "DELETE FROM responses WHERE request_id = ? AND workspace = ?").run(row.request_id, row.workspace).changes;
        if (!ctx.rebuilding) recordResponseChange(ctx.db, row.request_id);
      }
      return removed;
    });
  }
  return fixes;
}

/** How many response files the index holds, and how many of them cannot be read. */
export function responseCounts(db: IndexDb): { files: number; unreadable: number; callbackFailed: number } {
  return statement(db, "SELECT count(*) AS files, count(problem) AS unreadable, coalesce(sum(callback_success = 0), 0) AS callbackFailed FROM responses").get() as {
    files: number;
    unreadable: number;
    callbackFailed: number;
  };
}
