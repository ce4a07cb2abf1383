import type { SessionSummary } from "../db/changes";

export type SessionState = "active" | "expired" | "ended";

/** Ended by a reset; else active while updated within the expiry, else expired (a session never updated counts as expired). */
export function sessionState(summary: Pick<SessionSummary, "endedAt" | "updatedAt">, now: number, expiryMs: number): SessionState {
  if (summary.endedAt !== null) return "ended";
  return summary.updatedAt !== null && now - summary.updatedAt <= expiryMs ? "active" : "expired";
}

/** When a session was last active: the later of its last update and its last request's (a received session has only the latter). */
export function lastActive(row: { updatedAt?: number | null; lastSeen: number | null }): number {
  return Math.max(row.updatedAt ?? 0, row.lastSeen ?? 0);
}
