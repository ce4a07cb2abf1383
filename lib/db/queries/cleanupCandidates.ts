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
      `SELECT id, state FROM requests WHERE state IN (${states.map(() => "?").join(", ")}) AND updated_at <= ?
       AND coalesce(json_extract(doc, '$.transitions[#-1].at'), 0) <= ?
       ${ids ? "AND id IN (SELECT value FROM json_each(?))" : ""} ORDER BY updated_at, id`,
    )
    .all(...states, cutoff, cutoff, ...(ids ? [JSON.stringify(ids)] : [])) as { id: string; state: State }[];
}
