import type { IndexDb } from "./openIndex";
import type { RequestSummary } from "../types";
import { statement } from "./statements";
import type { RequestRecord } from "../model/requestFormat";
import { stateEnteredAt } from "../model/transition";

/** How many changes the feed keeps; a client further behind than this is told to refetch. */
export const FEED_RETAINED = 10_000;

/**
 * `response.changed`: a gateway's response file for the request was written, replaced or removed
 * (lib/responses). `queue.changed`: a workspace's queue was paused or resumed (its name where a
 * request's id would be).
 */
type ChangeKind = "request.upserted" | "request.removed" | "session.upserted" | "response.changed" | "queue.changed";

/** A session as the sessions list shows it (and as its feed change carries it). */
export interface SessionSummary {
  sessionId: string;
  createdAt: number | null;
  updatedAt: number | null;
  endedAt: number | null;
  activeTask: string | null;
  commands: number;
  files: number;
}

export interface FeedChange {
  seq: number;
  kind: ChangeKind;
  /** The request's id, or for `session.upserted` the session's. */
  requestId: string;
  /** The request as a list row, for `request.upserted`. */
  request?: RequestSummary;
  /** The session as a list row, for `session.upserted`. */
  session?: SessionSummary;
  at: number;
}

/** A request as a list row: the same shape `listRequests` returns (a test holds them equal). */
export function toSummary(request: RequestRecord): RequestSummary {
  return {
    requestId: request.requestId,
    workspace: request.workspace,
    sessionId: request.sessionId ?? null,
    chatId: request.chatId ?? null,
    state: request.state,
    previousState: request.previousState ?? null,
    createdAt: request.createdAt,
    lastUpdatedAt: request.lastUpdatedAt,
    stateSince: stateEnteredAt(request),
    attempt: request.attempt ?? null,
    model: request.model ?? null,
    tokens: request.tokens ?? null,
    version: request.version ?? 0,
  };
}

/** Append a change (its row as data, or none); called inside the transaction that changed the index. */
function appendChange(db: IndexDb, kind: ChangeKind, id: string, data: RequestSummary | SessionSummary | null, at: number): void {
  const { lastInsertRowid } = statement(db, "INSERT INTO changes (kind, request_id, data, at) VALUES (?, ?, ?, ?)").run(
    kind,
    id,
    data ? JSON.stringify(data) : null,
    at,
  );
  const seq = Number(lastInsertRowid);
  // Trim now and then, not on every write.
  if (seq % 500 === 0) statement(db, "DELETE FROM changes WHERE seq <= ?").run(seq - FEED_RETAINED);
}

/** A request's change, with its list row. */
export function recordChange(db: IndexDb, kind: ChangeKind, requestId: string, request: RequestRecord | null, at: number): void {
  appendChange(db, kind, requestId, request ? toSummary(request) : null, at);
}

/** A session's change, in the same feed (so one stream carries both); its id goes where a request's would. */
export function recordSessionChange(db: IndexDb, session: SessionSummary, at: number): void {
  appendChange(db, "session.upserted", session.sessionId, session, at);
}

/** A workspace paused or resumed, in the same feed, so every tab and process sees it. */
export function recordQueueChange(db: IndexDb, workspace: string, at: number): void {
  appendChange(db, "queue.changed", workspace, null, at);
}

export interface FeedHead {
  /** Changes before this one have been trimmed (0 when none were). */
  oldestSeq: number;
  lastSeq: number;
}

/** The newest change's number: one b-tree lookup (the poll of every live stream runs this). */
export function feedLastSeq(db: IndexDb): number {
  return (statement(db, "SELECT max(seq) FROM changes").pluck().get() as number | null) ?? 0;
}

export function feedHead(db: IndexDb): FeedHead {
  // Two statements: min() and max() together make SQLite scan the table instead of two lookups.
  const oldest = statement(db, "SELECT min(seq) FROM changes").pluck().get() as number | null;
  const last = statement(db, "SELECT max(seq) FROM changes").pluck().get() as number | null;
  // Empty only before the first change: a trim keeps the newest.
  if (last === null) return { oldestSeq: 1, lastSeq: 0 };
  return { oldestSeq: oldest ?? 0, lastSeq: last };
}

/** Changes after `afterSeq`, oldest first, at most `limit`. */
export function readChanges(db: IndexDb, afterSeq: number, limit = 1000): FeedChange[] {
  const rows = statement(db, "SELECT seq, kind, request_id AS requestId, data, at FROM changes WHERE seq > ? ORDER BY seq LIMIT ?").all(afterSeq, limit) as {
    seq: number;
    kind: ChangeKind;
    requestId: string;
    data: string | null;
    at: number;
  }[];
  return rows.map(({ data, ...row }) => {
    if (!data) return row;
    return row.kind === "session.upserted" ? { ...row, session: JSON.parse(data) as SessionSummary } : { ...row, request: JSON.parse(data) as RequestSummary };
  });
}

/** The requests the feed says were written or removed after `afterSeq`, each once. */
export function requestsChangedSince(db: IndexDb, afterSeq: number): string[] {
  return statement(db, "SELECT DISTINCT request_id FROM changes WHERE seq > ? AND kind IN ('request.upserted', 'request.removed')")
    .pluck()
    .all(afterSeq) as string[];
}
