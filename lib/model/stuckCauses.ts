/**
 * Why a request is stuck, as the monitor, the queues and the glossary say it: a queued request
 * waited past `queuedStuckAfterMs`; a processing one is past its deadline, has a claim with no
 * heartbeat for `heartbeatTimeoutMs`, or has no worker holding it for `processingStuckAfterMs`.
 */
const QUEUED_STUCK_CAUSES = ["waited too long"] as const;
const PROCESSING_STUCK_CAUSES = ["past its deadline", "no heartbeat", "no worker holds it"] as const;
export const STUCK_CAUSES = [...QUEUED_STUCK_CAUSES, ...PROCESSING_STUCK_CAUSES] as const;
export type StuckCause = (typeof STUCK_CAUSES)[number];

/** The state a request stuck for `cause` is in. */
export function stuckCauseState(cause: StuckCause): "queued" | "processing" {
  return (QUEUED_STUCK_CAUSES as readonly StuckCause[]).includes(cause) ? "queued" : "processing";
}
