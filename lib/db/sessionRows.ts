import { recordSessionChange, type SessionSummary } from "./changes";
import type { IndexDb } from "./openIndex";
import { statement } from "./statements";
import type { SessionRecord } from "../stateFiles/sessionFile";

const ms = (iso: string | undefined) => {
  const t = Date.parse(iso ?? "");
  return Number.isFinite(t) ? t : null;
};

export function toSessionSummary(session: SessionRecord): SessionSummary {
  return {
    sessionId: session.session_id,
    createdAt: ms(session.created_at),
    updatedAt: ms(session.last_updated),
    endedAt: ms(session.ended_at),
    activeTask: session.context_snapshot?.active_task ?? null,
    commands: session.commands_executed?.length ?? 0,
    files: Object.keys(session.files_modified ?? {}).length,
  };
}

/** Index a session (in the caller's transaction); a change reaches the feed, the same content again does not. */
export function upsertSession(db: IndexDb, session: SessionRecord, options: { feed?: boolean } = {}): boolean {
  const summary = toSessionSummary(session);
  const doc = JSON.stringify(session);
  const result = statement(
    db,
    `INSERT INTO sessions (id, created_at, updated_at, ended_at, active_task, commands, files, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET created_at = excluded.created_at, updated_at = excluded.updated_at, ended_at = excluded.ended_at,
       active_task = excluded.active_task, commands = excluded.commands, files = excluded.files, doc = excluded.doc
     WHERE excluded.doc IS NOT sessions.doc`,
  ).run(summary.sessionId, summary.createdAt, summary.updatedAt, summary.endedAt, summary.activeTask, summary.commands, summary.files, doc);
  if (result.changes && (options.feed ?? true)) recordSessionChange(db, summary, Date.now());
  return result.changes > 0;
}

export function removeSession(db: IndexDb, sessionId: string): void {
  statement(db, "DELETE FROM sessions WHERE id = ?").run(sessionId);
}

/** Newest update first. */
export function listSessions(db: IndexDb, limit = 200): SessionSummary[] {
  return (statement(db, "SELECT doc FROM sessions ORDER BY updated_at DESC, id DESC LIMIT ?").pluck().all(limit) as string[]).map((doc) =>
    toSessionSummary(JSON.parse(doc) as SessionRecord),
  );
}

/** The session to continue: the newest not ended and updated since `since` (null when there is none). */
export function currentSessionId(db: IndexDb, since: number): string | null {
  return (
    (statement(db, "SELECT id FROM sessions WHERE ended_at IS NULL AND updated_at >= ? ORDER BY updated_at DESC, id DESC LIMIT 1").pluck().get(since) as
      string | undefined) ?? null
  );
}

export function indexedSessionIds(db: IndexDb): string[] {
  return statement(db, "SELECT id FROM sessions").pluck().all() as string[];
}

/** Whether any session was ever recorded here. */
export function anySession(db: IndexDb): boolean {
  return statement(db, "SELECT 1 FROM sessions LIMIT 1").get() !== undefined;
}
