import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

/** A session as the requests that carry its id see it, whether or not its context was recorded. */
export interface SessionSeen {
  sessionId: string;
  requests: number;
  /** When the first of its requests was created, and the last one updated. */
  firstSeen: number;
  lastSeen: number;
}

const COLUMNS = "session_id AS sessionId, count(*) AS requests, min(created_at) AS firstSeen, max(updated_at) AS lastSeen";

/**
 * The sessions requests carry, most recently active first (one pass over requests_by_session), or
 * only those of `ids`.
 */
export function sessionsSeen(db: IndexDb, options: { ids?: readonly string[]; limit?: number } = {}): SessionSeen[] {
  if (options.ids) {
    if (!options.ids.length) return [];
    return statement(db, `SELECT ${COLUMNS} FROM requests WHERE session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id`).all(
      JSON.stringify(options.ids),
    ) as SessionSeen[];
  }
  return statement(db, `SELECT ${COLUMNS} FROM requests WHERE session_id IS NOT NULL GROUP BY session_id ORDER BY lastSeen DESC, session_id LIMIT ?`).all(
    options.limit ?? 200,
  ) as SessionSeen[];
}
