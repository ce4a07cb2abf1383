import type { SessionSummary } from "../db/changes";

export type SessionState = "active" | "expired" | "ended";

/** Ended by a reset; else active while updated within the expiry, else expired (a session never updated counts as expired). */
export function sessionState(summary: Pick<SessionSummary, "endedAt" | "updatedAt">, now: number, expiryMs: number): SessionState {
  if (summary.endedAt !== null) return "ended";
  return summary.updatedAt !== null && now - summary.updatedAt <= expiryMs ? "active" : "expired";
}
