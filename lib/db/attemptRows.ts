import type { IndexDb } from "./openIndex";
import { statement } from "./statements";
import { attemptsOf } from "../model/attempts";
import type { RequestRecord } from "../model/requestFormat";

const INSERT = `INSERT INTO attempts (request_id, number, workspace, worker_name, pid, host, process_started_at, claimed_at, ended_at, outcome)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Replace a request's rows in `attempts` with the reqwatch claims of its history. A claim step
 * written before claims recorded their worker takes it from the request's current claim when the
 * tokens match; otherwise only its name (`by`) is known.
 */
export function syncAttempts(db: IndexDb, request: RequestRecord): void {
  statement(db, "DELETE FROM attempts WHERE request_id = ?").run(request.requestId);
  for (const attempt of attemptsOf(request.transitions ?? [])) {
    if (attempt.token === null) continue;
    const current = request.claim?.token === attempt.token ? request.claim : undefined;
    const worker = attempt.worker ?? (current?.pid !== undefined ? { pid: current.pid, host: current.host ?? null, processStartedAt: current.processStartedAt ?? null } : null);
    statement(db, INSERT).run(
      request.requestId,
      attempt.number,
      request.workspace,
      attempt.by,
      worker?.pid ?? null,
      worker?.host ?? null,
      worker?.processStartedAt ?? null,
      attempt.claimedAt,
      attempt.ended?.at ?? null,
      attempt.ended?.how ?? null,
    );
  }
}

export function removeAttempts(db: IndexDb, requestId: string): void {
  statement(db, "DELETE FROM attempts WHERE request_id = ?").run(requestId);
}
