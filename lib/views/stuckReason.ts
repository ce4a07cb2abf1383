import type { RequestSummary, StuckRequest } from "../types";

/**
 * The monitor's reason for a request, if it still describes it: a reason is for the state (and
 * the moment it entered it) the pass saw, and a request that moved on since is not stuck for it.
 * Pure, for the server's views and the browser's live updates alike.
 */
export function stuckReasonOf(
  stuck: readonly StuckRequest[] | ReadonlyMap<string, StuckRequest>,
  row: Pick<RequestSummary, "requestId" | "state" | "stateSince">,
): string | null {
  const entry = stuck instanceof Map ? stuck.get(row.requestId) : (stuck as readonly StuckRequest[]).find((s) => s.requestId === row.requestId);
  return entry && entry.state === row.state && entry.since === row.stateSince ? entry.reason : null;
}
