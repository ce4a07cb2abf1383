import type { IndexDb } from "./openIndex";
import { statement } from "./statements";
import { activitySteps, durationBin, type ActivityStep } from "../model/activity";
import type { RequestRecord } from "../model/requestFormat";

const INSERT = `INSERT INTO transitions (request_id, seq, workspace, at, from_state, to_state, wait_ms, wait_bin, run_ms, run_bin, outcome)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** One row of `transitions`, as INSERT's parameters (request_id, seq, workspace, at, from, to, wait, its bin, run, its bin, outcome). */
export type StepRow = [string, number, string, number, string | null, string, number | null, number | null, number | null, number | null, string | null];

/** A request's rows in `transitions`, one per step. Pure: a rebuild computes them off the writer's thread. */
export function stepRowsOf(request: RequestRecord): StepRow[] {
  return activitySteps(request).map((step: ActivityStep) => [
    request.requestId,
    step.seq,
    request.workspace,
    step.at,
    step.from,
    step.to,
    step.waitMs,
    step.waitMs === null ? null : durationBin(step.waitMs),
    step.runMs,
    step.runMs === null ? null : durationBin(step.runMs),
    step.outcome,
  ]);
}

/**
 * Bring a request's rows in `transitions` up to its steps. A history only grows, so a write appends
 * its new steps; anything else (the last known step changed: another program rewrote the file, or
 * the workspace changed) replaces them all. The triggers keep the rollups (lib/db/ddl.ts).
 */
export function syncTransitions(db: IndexDb, requestId: string, workspace: string, rows: readonly StepRow[]): void {
  const last = statement(db, "SELECT seq, at, to_state AS toState, workspace FROM transitions WHERE request_id = ? ORDER BY seq DESC LIMIT 1").get(
    requestId,
  ) as { seq: number; at: number; toState: string; workspace: string } | undefined;
  let from = 0;
  if (last) {
    const same = rows[last.seq];
    if (same && same[3] === last.at && same[5] === last.toState && last.workspace === workspace) from = last.seq + 1;
    else removeTransitions(db, requestId);
  }
  insertSteps(db, rows.slice(from));
}

/** Add rows to `transitions` (steps the index does not hold yet). */
export function insertSteps(db: IndexDb, rows: readonly StepRow[]): void {
  const insert = statement(db, INSERT);
  for (const row of rows) insert.run(...row);
}

export function removeTransitions(db: IndexDb, requestId: string): void {
  statement(db, "DELETE FROM transitions WHERE request_id = ?").run(requestId);
}
