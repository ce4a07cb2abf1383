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

/** Replace a request's rows in `attempts`. */
export function syncAttempts(db: IndexDb, requestId: string, rows: readonly AttemptRow[]): void {
  statement(db, "DELETE FROM attempts WHERE request_id = ?").run(requestId);
  insertAttempts(db, rows);
}

/** Add rows to `attempts` (a request that has none yet). */
export function insertAttempts(db: IndexDb, rows: readonly AttemptRow[]): void {
  const insert = statement(db, INSERT);
  for (const row of rows) insert.run(...row);
}

export function removeAttempts(db: IndexDb, requestId: string): void {
  statement(db, "DELETE FROM attempts WHERE request_id = ?").run(requestId);
}
