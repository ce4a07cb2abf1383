import type { SessionSummary } from "../db/changes";

/** `idle`: a received session with nothing in it going on (every turn and call of it finished). */
export type SessionState = "active" | "idle" | "expired" | "ended";

/** Ended by a reset; else active while updated within the expiry, else expired (a session never updated counts as expired). */
export function sessionState(summary: Pick<SessionSummary, "endedAt" | "updatedAt">, now: number, expiryMs: number): SessionState {
  if (summary.endedAt !== null) return "ended";
  return summary.updatedAt !== null && now - summary.updatedAt <= expiryMs ? "active" : "expired";
}

/** A session received over OpenTelemetry is active while something in it is going on (a turn or a call not finished, and not stuck), else idle: how recent its last record is says nothing of that. */
export function receivedSessionState(goingOn: number): SessionState {
  return goingOn > 0 ? "active" : "idle";
}

/** When a session was last active: the later of its last update and its last request's (a received session has only the latter). */
export function lastActive(row: { updatedAt?: number | null; lastSeen: number | null }): number {
  return Math.max(row.updatedAt ?? 0, row.lastSeen ?? 0);
}
