import type { SessionSummary } from "../feed/changes";
import type { StateCounts } from "../index/queries/countByState";
import type { SessionRecord } from "../sessions/sessionFile";
import { sessionState, toSessionSummary, type SessionState } from "../sessions/sessionIndex";
import type { Tracker } from "../tracker";

export interface SessionRow extends SessionSummary {
  state: SessionState;
  requests: number;
}

export interface SessionDetailView {
  session: SessionRecord;
  state: SessionState;
  requestCounts: StateCounts;
  expiryMs: number;
}

/** The sessions list: each session's state, and how many requests carry its id. */
export function sessionsView(tracker: Tracker): SessionRow[] {
  const now = tracker.options.now();
  const sessions = tracker.sessions.list();
  const counts = tracker.requestCountsBySession(sessions.map((s) => s.sessionId));
  return sessions.map((s) => ({ ...s, state: sessionState(s, now, tracker.options.sessionExpiryMs), requests: counts.get(s.sessionId) ?? 0 }));
}

export function sessionDetailView(tracker: Tracker, sessionId: string): SessionDetailView | null {
  const session = tracker.sessions.get(sessionId);
  if (!session) return null;
  return {
    session,
    state: sessionState(toSessionSummary(session), tracker.options.now(), tracker.options.sessionExpiryMs),
    requestCounts: tracker.countsByState({ sessionId }),
    expiryMs: tracker.options.sessionExpiryMs,
  };
}
