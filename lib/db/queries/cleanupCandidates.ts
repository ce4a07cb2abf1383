import type { State } from "../../model/states";
import type { IndexDb } from "../openIndex";

/** Requests in `states` last updated at or before `cutoff` (only `ids`, when given), oldest first. */
export function cleanupCandidates(db: IndexDb, states: readonly State[], cutoff: number, ids?: readonly string[]): { id: string; state: State }[] {
  return db
    .prepare(
      `SELECT id, state FROM requests WHERE state IN (${states.map(() => "?").join(", ")}) AND updated_at <= ?
       ${ids ? "AND id IN (SELECT value FROM json_each(?))" : ""} ORDER BY updated_at, id`,
    )
    .all(...states, cutoff, ...(ids ? [JSON.stringify(ids)] : [])) as { id: string; state: State }[];
}
