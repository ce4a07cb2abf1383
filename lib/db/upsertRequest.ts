import type { FileFingerprint } from "../fs/fingerprint";
import type { RequestRecord } from "../model/requestFormat";
import type { IndexDb } from "./openIndex";
import { statement } from "./statements";
import { attemptRowsOf, insertAttempts, removeAttempts, syncAttempts, type AttemptRow } from "./attemptRows";
import { insertSteps, removeTransitions, stepRowsOf, syncTransitions, type StepRow } from "./transitionRows";
import { forgetUnreadable } from "./unreadableFiles";
import stableStringify from "safe-stable-stringify";
import { recordChange, toSummary } from "./changes";
import { syncRequestText, textSignature } from "./requestText";

// The row becomes the file as read under the writers' lock, whatever its version says: the file is
// the truth every writer decides from (a stale copy put back, a claim a power cut lost). The same
// content again (a touch, a second look at one file) changes nothing and reaches no one.
const INSERT = `
      INSERT INTO requests (id, workspace, session_id, chat_id, state, previous_state, created_at, updated_at,
        state_since, processing_started_at, attempt, model, tokens, version, max_attempts, not_before, timeout_at,
        claim_token, claim_pid, claim_host, claim_process_started_at, last_claimed_at, callback_success, heartbeat_at, file_mtime_ms, file_size, file_ino, text_sig, doc)
      VALUES (@id, @workspace, @session_id, @chat_id, @state, @previous_state, @created_at, @updated_at,
        @state_since, @processing_started_at, @attempt, @model, @tokens, @version, @max_attempts, @not_before, @timeout_at,
        @claim_token, @claim_pid, @claim_host, @claim_process_started_at, @last_claimed_at, @callback_success, @heartbeat_at, @file_mtime_ms, @file_size, @file_ino, @text_sig, @doc)`;

/** The columns a write sets (INSERT's, in its order), and the stored row they are compared with. */
const WRITTEN_COLUMNS = INSERT.slice(INSERT.indexOf("(") + 1, INSERT.indexOf(")"))
  .split(",")
  .map((column) => column.trim());
const STORED_ROW = `SELECT rowid, ${WRITTEN_COLUMNS.join(", ")}, reserved_until, reserved_by FROM requests WHERE id = ?`;
type StoredRow = Record<string, string | number | null> & { rowid: number; text_sig: string | null };

/**
 * The new row's values for an existing row: a heartbeat newer than the file's (beats go to the
 * index only) survives a re-read of the same claim, and any write ends a claimer's reservation.
 * Null when the row stays as it is: the same content, or for a file read before the lock was taken
 * (`ordered`: a rebuild's reader threads) an older version, or at the same version an older
 * lastUpdatedAt, than a writer wrote since.
 */
function updatedValues(stored: StoredRow, params: IndexRows["params"], ordered: boolean): IndexRows["params"] | null {
  const newer =
    !ordered ||
    Number(params.version) > Number(stored.version) ||
    (params.version === stored.version && Number(params.updated_at) >= Number(stored.updated_at));
  if (!newer || params.doc === stored.doc) return null;
  const heartbeatAt =
    params.claim_token === stored.claim_token ? Math.max(Number(stored.heartbeat_at ?? 0), Number(params.heartbeat_at ?? 0)) : (params.heartbeat_at ?? null);
  return { ...params, heartbeat_at: heartbeatAt, reserved_until: null, reserved_by: null };
}

/**
 * Update only the columns whose values changed. SQLite rewrites an index entry whenever a column
 * of it is SET, same value or not: setting every column put a page of each of the table's indexes
 * into the write-ahead log on every write (docs/PERFORMANCE.md, "What a write puts in the log").
 */
function updateChangedColumns(db: IndexDb, stored: StoredRow, values: IndexRows["params"]): void {
  const changed = Object.keys(values).filter((column) => values[column] !== stored[column]);
  // One statement per set of columns, prepared once: a lifecycle's steps change a few dozen sets at most.
  const update = statement(db, `UPDATE requests SET ${changed.map((column) => `${column} = @${column}`).join(", ")} WHERE rowid = @rowid`);
  update.run({ ...Object.fromEntries(changed.map((column) => [column, values[column]])), rowid: stored.rowid });
}

/** For a rebuild: its rows are nearly all new, and a new row needs none of the lookups an update does. */
const INSERT_NEW = INSERT.replace("INSERT INTO", "INSERT OR IGNORE INTO");

/** The same content under a new fingerprint (touched, copied over itself): remember the file, nothing else. */
const REFINGERPRINT = `UPDATE requests SET file_mtime_ms = ?, file_size = ?, file_ino = ? WHERE id = ? AND doc = ?`;

/** What a request puts into the index: its row, its text's signature, its attempts and steps. Pure, so a rebuild computes it off the writer's thread. */
export interface IndexRows {
  requestId: string;
  params: Record<string, string | number | null>;
  textSig: string | null;
  attempts: AttemptRow[];
  steps: StepRow[];
}

export function indexRowsOf(request: RequestRecord, fingerprint: FileFingerprint): IndexRows {
  // Keys in a stable order: the writer's object and the same file parsed back must compare equal.
  const doc = stableStringify(request) as string;
  // The list columns come from the list row itself, so the table and the feed can never disagree.
  const row = toSummary(request);
  const textSig = textSignature(request);
  return {
    requestId: row.requestId,
    textSig,
    attempts: attemptRowsOf(request),
    steps: stepRowsOf(request),
    params: {
      id: row.requestId,
      workspace: row.workspace,
      session_id: row.sessionId,
      chat_id: row.chatId,
      state: row.state,
      previous_state: row.previousState,
      created_at: row.createdAt,
      updated_at: row.lastUpdatedAt,
      state_since: row.stateSince,
      processing_started_at: request.processingStartedAt ?? null,
      attempt: row.attempt,
      model: row.model,
      tokens: row.tokens,
      version: row.version,
      max_attempts: request.maxAttempts ?? null,
      not_before: request.notBefore ?? null,
      timeout_at: request.timeoutAt ?? null,
      claim_token: request.claim?.token ?? null,
      claim_pid: request.claim?.pid ?? null,
      claim_host: request.claim?.host ?? null,
      claim_process_started_at: request.claim?.processStartedAt ?? null,
      last_claimed_at: lastClaimedAt(request),
      callback_success: request.callback ? (request.callback.success ? 1 : 0) : null,
      heartbeat_at: request.claim
        ? (request.claim.heartbeatAt ?? request.claim.claimedAt ?? row.stateSince)
        : request.state === "processing"
          ? row.stateSince
          : null,
      file_mtime_ms: fingerprint.mtimeMs,
      file_size: fingerprint.size,
      file_ino: fingerprint.ino,
      text_sig: textSig,
      doc,
    },
  };
}

/**
 * Put one request, as just written to its file under the writers' lock, into the index. Returns
 * false when the index already holds that content.
 * `feed: false` and `text: false` are for a rebuild: no feed changes, and the text index is filled
 * afterwards in one pass (requestText.ts).
 */
export function upsertRequest(db: IndexDb, request: RequestRecord, fingerprint: FileFingerprint, options: { feed?: boolean; text?: boolean } = {}): boolean {
  return writeIndexRows(db, indexRowsOf(request, fingerprint), { text: options.text ?? true, feed: options.feed ?? true, request });
}

/**
 * Write a request's rows (lib/db/upsertRequest.ts's `indexRowsOf`). The text index and the feed
 * need the request itself; a rebuild writes neither. `ordered`: the file was read before the lock
 * was taken, so a newer row a writer wrote since stays.
 */
export function writeIndexRows(
  db: IndexDb,
  rows: IndexRows,
  options: ({ text: false; feed: false } | { text: boolean; feed: boolean; request: RequestRecord }) & { ordered?: boolean },
): boolean {
  const { requestId, params } = rows;
  if (!options.text && !options.feed && statement(db, INSERT_NEW).run(params).changes === 1) {
    // New to the index: no unreadable record, no attempts and no steps to compare with.
    forgetUnreadable(db, requestFileKey(requestId));
    insertAttempts(db, rows.attempts);
    insertSteps(db, rows.steps);
    return true;
  }
  const stored = statement(db, STORED_ROW).get(requestId) as StoredRow | undefined;
  forgetUnreadable(db, requestFileKey(requestId));
  let rowid: number | bigint;
  if (stored) {
    const values = updatedValues(stored, params, options.ordered ?? false);
    if (!values) {
      statement(db, REFINGERPRINT).run(params.file_mtime_ms, params.file_size, params.file_ino, requestId, params.doc);
      return false;
    }
    updateChangedColumns(db, stored, values);
    rowid = stored.rowid;
  } else {
    rowid = statement(db, INSERT).run(params).lastInsertRowid;
  }
  if ("request" in options && options.text) syncRequestText(db, rowid, options.request, stored?.text_sig ?? null, rows.textSig);
  syncAttempts(db, requestId, rows.attempts);
  syncTransitions(db, requestId, String(params.workspace), rows.steps);
  if ("request" in options && options.feed) recordChange(db, "request.upserted", requestId, options.request, Date.now());
  return true;
}

/** When a reqwatch worker last claimed the request: the newest claim step in its history, else its current claim. */
function lastClaimedAt(request: RequestRecord): number | null {
  const history = request.transitions ?? [];
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i]!;
    if (entry.to === "processing" && entry.from !== "processing" && entry.token) return entry.at;
  }
  return request.claim?.claimedAt ?? null;
}

export function removeRequest(db: IndexDb, requestId: string): void {
  const row = statement(db, "SELECT rowid, text_sig FROM requests WHERE id = ?").get(requestId) as { rowid: number; text_sig: string | null } | undefined;
  if (row?.text_sig) statement(db, "DELETE FROM requests_text WHERE rowid = ?").run(row.rowid);
  const removed = statement(db, "DELETE FROM requests WHERE id = ?").run(requestId).changes > 0;
  removeAttempts(db, requestId);
  removeTransitions(db, requestId);
  forgetUnreadable(db, requestFileKey(requestId));
  if (removed) recordChange(db, "request.removed", requestId, null, Date.now());
}

/** How files are named in `unreadable_files` and in reports: relative to the state directory. */
export function requestFileKey(requestId: string): string {
  return `requests/${requestId}.json`;
}
