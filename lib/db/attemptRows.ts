import type { IndexDb } from "./openIndex";
import { statement } from "./statements";
import { attemptsOf } from "../model/attempts";
import type { RequestRecord } from "../model/requestFormat";

const INSERT = `INSERT INTO attempts (request_id, number, workspace, worker_name, pid, host, process_started_at, claimed_at, ended_at, outcome)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** One row of `attempts`, as INSERT's parameters. */
export type AttemptRow = [string, number, string, string | null, number | null, string | null, number | null, number, number | null, string | null];

/**
 * A request's rows in `attempts`: the reqwatch claims of its history. A claim step written before
 * claims recorded their worker takes it from the request's current claim when the tokens match;
 * otherwise only its name (`by`) is known. Pure: a rebuild computes them off the writer's thread.
 */
export function attemptRowsOf(request: RequestRecord): AttemptRow[] {
  const rows: AttemptRow[] = [];
  for (const attempt of attemptsOf(request.transitions ?? [])) {
    if (attempt.token === null) continue;
    const current = request.claim?.token === attempt.token ? request.claim : undefined;
    const worker =
      attempt.worker ??
      (current?.pid !== undefined ? { pid: current.pid, host: current.host ?? null, processStartedAt: current.processStartedAt ?? null } : null);
    rows.push([
      request.requestId,
      attempt.number,
      request.workspace,
      attempt.by ?? null,
      worker?.pid ?? null,
      worker?.host ?? null,
      worker?.processStartedAt ?? null,
      attempt.claimedAt,
      attempt.ended?.at ?? null,
      attempt.ended?.how ?? null,
    ]);
  }
  return rows;
}

const STORED = `SELECT request_id, number, workspace, worker_name, pid, host, process_started_at, claimed_at, ended_at, outcome
  FROM attempts WHERE request_id = ?`;
const UPDATE_END = "UPDATE attempts SET workspace = ?, worker_name = ?, ended_at = ?, outcome = ? WHERE request_id = ? AND number = ?";
const DELETE_ONE = "DELETE FROM attempts WHERE request_id = ? AND number = ?";

/** The columns of `attempts_by_worker` (lib/db/ddl.ts), by their place in an AttemptRow: pid, host, process_started_at, claimed_at. */
const WORKER_KEY = [4, 5, 6, 7] as const;

/**
 * Bring a request's rows in `attempts` up to `rows`, touching only the rows that changed: an
 * attempt that ends changes its end alone, and leaves its worker's index entry as it was (a
 * rewritten row put a page of that index into the write-ahead log on every write).
 */
export function syncAttempts(db: IndexDb, requestId: string, rows: readonly AttemptRow[]): void {
  const stored = new Map((statement(db, STORED).raw().all(requestId) as AttemptRow[]).map((row) => [row[1], row] as const));
  for (const row of rows) {
    const before = stored.get(row[1]);
    stored.delete(row[1]);
    if (before && row.every((value, i) => value === before[i])) continue;
    if (before && WORKER_KEY.every((i) => row[i] === before[i])) {
      statement(db, UPDATE_END).run(row[2], row[3], row[8], row[9], requestId, row[1]);
      continue;
    }
    if (before) statement(db, DELETE_ONE).run(requestId, row[1]);
    statement(db, INSERT).run(...row);
  }
  for (const number of stored.keys()) statement(db, DELETE_ONE).run(requestId, number);
}

/** Add rows to `attempts` (a request that has none yet). */
export function insertAttempts(db: IndexDb, rows: readonly AttemptRow[]): void {
  const insert = statement(db, INSERT);
  for (const row of rows) insert.run(...row);
}

export function removeAttempts(db: IndexDb, requestId: string): void {
  statement(db, "DELETE FROM attempts WHERE request_id = ?").run(requestId);
}
