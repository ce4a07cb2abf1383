import type { State } from "../../model/states";
import type { IndexDb } from "../openIndex";

/**
 * Requests in `states` last updated at or before `cutoff` (only `ids`, when given), oldest first.
 * A request restored since the cutoff keeps its own last update but is not taken again: its
 * history's last step (the restore) must be past the cutoff too.
 */
export function cleanupCandidates(db: IndexDb, states: readonly State[], cutoff: number, ids?: readonly string[]): { id: string; state: State }[] {
  return db
    .prepare(
      // Given ids, each is looked up (CROSS JOIN keeps json_each outside): a step of a paced cleanup
      // costs its few requests, not a pass over every request still past the cutoff.
      `SELECT id, state FROM ${ids ? "(SELECT DISTINCT value FROM json_each(?)) AS asked CROSS JOIN requests ON requests.id = asked.value" : "requests"}
       WHERE state IN (${states.map(() => "?").join(", ")}) AND updated_at <= ?
       AND coalesce(json_extract(doc, '$.transitions[#-1].at'), 0) <= ? ORDER BY updated_at, id`,
    )
    .all(...(ids ? [JSON.stringify(ids)] : []), ...states, cutoff, cutoff) as { id: string; state: State }[];
}
