import type { SessionSummary } from "../db/changes";
import type { StateCounts } from "../db/queries/countByState";
import type { SessionSeen } from "../db/queries/sessionsSeen";
import type { SessionRecord } from "../stateFiles/sessionFile";
import { toSessionSummary } from "../db/sessionRows";
import { lastActive, sessionState, type SessionState } from "../sessions/sessionState";
import type { Reader } from "../roles/reader";
import type { TelemetrySessionRow, TelemetrySessions } from "./telemetrySessionsView";

/** A session of the state folder's: recorded (a session file), or carried by its requests. */
export interface FolderSessionRow extends SessionSummary {
  source: null;
  state: SessionState;
  requests: number;
  /** Whether its context was recorded (a session file); false for a session known only from the requests that carry its id. */
  recorded: boolean;
  /** The first of its requests created, the last updated (null when none carries its id). */
  firstSeen: number | null;
  lastSeen: number | null;
}

/** A row of the sessions list: the folder's, or one received over OpenTelemetry (`source: "otel"`). */
export type SessionRow = FolderSessionRow | TelemetrySessionRow;

export interface SessionDetailView {
  /** The recorded context, or null when only requests carry the id. */
  session: SessionRecord | null;
  sessionId: string;
  state: SessionState;
  requestCounts: StateCounts;
  seen: SessionSeen | null;
  expiryMs: number;
}

/**
 * The sessions list: every recorded session, every session id requests carry without a recorded
 * context, with their requests' counts and first and last seen, and the sessions received over
 * OpenTelemetry (`telemetry`, a read model beside the tracker; null: none); most recently active first.
 */
export function sessionsView(reader: Reader, telemetry: TelemetrySessions | null = null): SessionRow[] {
  const now = reader.options.now();
  const expiry = reader.options.sessionExpiryMs;
  const recorded = reader.sessions.list();
  const seenOfRecorded = new Map(reader.sessionsSeen({ ids: recorded.map((s) => s.sessionId) }).map((s) => [s.sessionId, s]));
  const rows: SessionRow[] = recorded.map((s) => {
    const seen = seenOfRecorded.get(s.sessionId);
    return {
      ...s,
      source: null,
      state: sessionState(s, now, expiry),
      requests: seen?.requests ?? 0,
      recorded: true,
      firstSeen: seen?.firstSeen ?? null,
      lastSeen: seen?.lastSeen ?? null,
    };
  });
  const known = new Set(recorded.map((s) => s.sessionId));
  for (const seen of reader.sessionsSeen()) {
    if (known.has(seen.sessionId)) continue;
    const summary = { sessionId: seen.sessionId, createdAt: seen.firstSeen, updatedAt: seen.lastSeen, endedAt: null, activeTask: null, commands: 0, files: 0 };
    rows.push({
      ...summary,
      source: null,
      state: sessionState(summary, now, expiry),
      requests: seen.requests,
      recorded: false,
      firstSeen: seen.firstSeen,
      lastSeen: seen.lastSeen,
    });
  }
  rows.push(...(telemetry?.list(now) ?? []));
  return rows.sort((a, b) => lastActive(b) - lastActive(a) || a.sessionId.localeCompare(b.sessionId));
}

/** A session's page: its recorded context if any, and its requests; null when neither exists. */
export function sessionDetailView(reader: Reader, sessionId: string): SessionDetailView | null {
  const session = reader.sessions.get(sessionId);
  const seen = reader.sessionsSeen({ ids: [sessionId] })[0] ?? null;
  if (!session && !seen) return null;
  const summary = session ? toSessionSummary(session) : { endedAt: null, updatedAt: seen!.lastSeen };
  return {
    session,
    sessionId,
    state: sessionState(summary, reader.options.now(), reader.options.sessionExpiryMs),
    requestCounts: reader.countsByState({ sessionId }),
    seen,
    expiryMs: reader.options.sessionExpiryMs,
  };
}
