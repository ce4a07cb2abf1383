import type { FileFingerprint } from "../fs/fingerprint";
import { recordChange } from "./changes";
import type { IndexDb } from "./openIndex";
import { statement } from "./statements";

/** A response file's row: its request, its workspace and the file as it was read. */
interface IndexedResponse extends FileFingerprint {
  request_id: string;
  workspace: string;
}

/** What the index keeps of a response file: its callback delivery (1, 0, or null when none), or why it cannot be read. */
interface ResponseRow {
  requestId: string;
  workspace: string;
  callbackSuccess: 0 | 1 | null;
  problem: string | null;
  fingerprint: FileFingerprint | null;
}

/** Insert or update a response row; true when it changed (an unchanged file is not rewritten). */
export function upsertResponse(db: IndexDb, row: ResponseRow): boolean {
  const { fingerprint } = row;
  return (
    statement(
      db,
      `INSERT INTO responses (request_id, workspace, callback_success, problem, file_mtime_ms, file_size, file_ino) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(request_id, workspace) DO UPDATE SET callback_success = excluded.callback_success, problem = excluded.problem,
         file_mtime_ms = excluded.file_mtime_ms, file_size = excluded.file_size, file_ino = excluded.file_ino
       WHERE responses.file_mtime_ms IS NOT excluded.file_mtime_ms OR responses.file_size IS NOT excluded.file_size OR responses.file_ino IS NOT excluded.file_ino`,
    ).run(row.requestId, row.workspace, row.callbackSuccess, row.problem, fingerprint?.mtimeMs ?? null, fingerprint?.size ?? null, fingerprint?.ino ?? null)
      .changes > 0
  );
}

/** Remove a response row; true when there was one. */
export function removeResponse(db: IndexDb, requestId: string, workspace: string): boolean {
  return statement(db, "DELETE FROM responses WHERE request_id = ? AND workspace = ?").run(requestId, workspace).changes > 0;
}

export function indexedResponses(db: IndexDb): IndexedResponse[] {
  return statement(db, "SELECT request_id, workspace, file_mtime_ms AS mtimeMs, file_size AS size, file_ino AS ino FROM responses").all() as IndexedResponse[];
}

/** A response change reaches the feed (the feed's own append, trim included), so an open request page shows it and a "callback failed" view refetches. */
export function recordResponseChange(db: IndexDb, requestId: string): void {
  recordChange(db, "response.changed", requestId, null, Date.now());
}

/** How many response files the index holds, and how many of them cannot be read. */
export function responseCounts(db: IndexDb): { files: number; unreadable: number; callbackFailed: number } {
  return statement(
    db,
    "SELECT count(*) AS files, count(problem) AS unreadable, coalesce(sum(callback_success = 0), 0) AS callbackFailed FROM responses",
  ).get() as {
    files: number;
    unreadable: number;
    callbackFailed: number;
  };
}
