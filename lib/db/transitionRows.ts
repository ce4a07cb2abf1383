import type { IndexDb } from "./openIndex";
import { statement } from "./statements";
import { activitySteps, durationBin, type ActivityStep } from "../model/activity";
import type { RequestRecord } from "../model/requestFormat";

const INSERT = `INSERT INTO transitions (request_id, seq, workspace, at, from_state, to_state, wait_ms, wait_bin, run_ms, run_bin, outcome)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Bring a request's rows in `transitions` up to its steps. A history only grows, so a write appends
 * its new steps; anything else (the last known step changed: another program rewrote the file, or
 * the workspace changed) replaces them all. The triggers keep the rollups (lib/db/ddl.ts).
 */
export function syncTransitions(db: IndexDb, request: RequestRecord): void {
  const steps = activitySteps(request);
  const last = statement(db, "SELECT seq, at, to_state AS toState, workspace FROM transitions WHERE request_id = ? ORDER BY seq DESC LIMIT 1").get(request.requestId) as
    | { seq: number; at: number; toState: string; workspace: string }
    | undefined;
  let from = 0;
  if (last) {
    const same = steps[last.seq];
    if (same && same.at === last.at && same.to === last.toState && last.workspace === request.workspace) from = last.seq + 1;
    else removeTransitions(db, request.requestId);
  }
  for (const step of steps.slice(from)) insertStep(db, request, step);
}

function insertStep(db: IndexDb, request: RequestRecord, step: ActivityStep): void {
  statement(db, INSERT).run(
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
  );
}

export function removeTransitions(db: IndexDb, requestId: string): void {
  statement(db, "DELETE FROM transitions WHERE request_id = ?").run(requestId);
}
