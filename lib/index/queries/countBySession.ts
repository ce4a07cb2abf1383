import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

/** How many requests carry each of these session ids (one grouped query over requests_by_session). */
export function countRequestsBySession(db: IndexDb, ids: readonly string[]): Map<string, number> {
  if (!ids.length) return new Map();
  const rows = statement(db, "SELECT session_id AS id, count(*) AS n FROM requests WHERE session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id").all(JSON.stringify(ids)) as { id: string; n: number }[];
  return new Map(rows.map((row) => [row.id, row.n]));
}
