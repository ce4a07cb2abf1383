import type { State } from "../../model/states";
import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

/** A request past a stuck threshold: queued too long, past its deadline, or without a heartbeat too long. */
export interface StuckRow {
  id: string;
  workspace: string;
  state: State;
  state_since: number;
  /** 0 for a file reqwatch never wrote (it always writes a version). */
  version: number;
  not_before: number | null;
  timeout_at: number | null;
  heartbeat_at: number | null;
  claim_token: string | null;
  claim_pid: number | null;
  claim_host: string | null;
  claim_process_started_at: number | null;
}

/**
 * The one index query of a pass: queued too long, past a deadline, or without a heartbeat too long. Three range
 * scans (requests_by_state_since, requests_deadline, requests_silent), so a pass over a healthy
 * queue of any size reads only the rows that are stuck.
 */
const COLUMNS =
  "id, workspace, state, state_since, version, not_before, timeout_at, heartbeat_at, claim_token, claim_pid, claim_host, claim_process_started_at";
// No ORDER BY here: it would make SQLite walk the state_since index of every branch to merge them;
// the few stuck rows are sorted in JS. Without statistics the planner prefers state = ? on
// requests_by_state_since (every processing row) to the partial indexes, so they are named.
// A request with no claim has no heartbeat (its heartbeat_at is when it entered processing): it is
// stuck past the processing stuck threshold, a claimed one past the heartbeat timeout.
export const STUCK_ROWS = `
  SELECT ${COLUMNS} FROM requests WHERE state = 'queued' AND state_since < @queuedCutoff AND workspace NOT IN (SELECT value FROM json_each(@paused))
  UNION ALL
  SELECT ${COLUMNS} FROM requests INDEXED BY requests_deadline
    WHERE state = 'processing' AND timeout_at IS NOT NULL AND timeout_at < @now
  UNION ALL
  SELECT ${COLUMNS} FROM requests INDEXED BY requests_silent WHERE state = 'processing' AND heartbeat_at < @scanCutoff
    AND heartbeat_at < (CASE WHEN claim_token IS NULL THEN @unclaimedCutoff ELSE @heartbeatCutoff END)
    AND NOT (timeout_at IS NOT NULL AND timeout_at < @now)`;

interface StuckCutoffs {
  now: number;
  /** Queued since before this is stuck. */
  queuedCutoff: number;
  /** A claimed request's last heartbeat before this is stuck. */
  heartbeatCutoff: number;
  /** An unclaimed processing request's since before this is stuck (no worker holds it). */
  unclaimedCutoff: number;
  /** Workspaces whose queue is paused: their wait is not stuck. */
  paused: readonly string[];
}

/** The stuck requests, oldest first. */
export function stuckRows(db: IndexDb, cutoffs: StuckCutoffs): StuckRow[] {
  const rows = statement(db, STUCK_ROWS).all({
    ...cutoffs,
    paused: JSON.stringify(cutoffs.paused),
    scanCutoff: Math.max(cutoffs.heartbeatCutoff, cutoffs.unclaimedCutoff),
  }) as StuckRow[];
  return rows.sort((a, b) => a.state_since - b.state_since || a.id.localeCompare(b.id));
}

/** When a workspace's latest claim was made, null when none ever was. */
export function lastClaimAt(db: IndexDb, workspace: string): number | null {
  return statement(db, "SELECT max(last_claimed_at) FROM requests WHERE workspace = ? AND last_claimed_at IS NOT NULL").pluck().get(workspace) as number | null;
}

export interface ProcessingRow {
  id: string;
  claim_token: string | null;
  claim_pid: number | null;
  claim_host: string | null;
  claim_process_started_at: number | null;
  heartbeat_at: number | null;
}

/** Requests in `processing` since before `cutoff`, with their claims. */
export function processingSince(db: IndexDb, cutoff: number): ProcessingRow[] {
  return statement(
    db,
    "SELECT id, claim_token, claim_pid, claim_host, claim_process_started_at, heartbeat_at FROM requests WHERE state = 'processing' AND COALESCE(processing_started_at, state_since) < ?",
  ).all(cutoff) as ProcessingRow[];
}
