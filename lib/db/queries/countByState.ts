import { STATES, type State } from "../../model/states";
import { assertRequestId, assertWorkspace } from "../../model/ids";
import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

export type StateCounts = Record<State, number>;

/** A count for every state, zeros included, so callers never special-case a missing key. */
export function countByState(db: IndexDb, filters: { workspace?: string; sessionId?: string } = {}): StateCounts {
  if (filters.workspace !== undefined) assertWorkspace(filters.workspace);
  if (filters.sessionId !== undefined) assertRequestId(filters.sessionId);
  const counts = Object.fromEntries(STATES.map((state) => [state, 0])) as StateCounts;
  const rows = (
    filters.sessionId !== undefined
      ? statement(db, "SELECT state, count(*) AS n FROM requests WHERE session_id = ? GROUP BY state").all(filters.sessionId)
      : filters.workspace === undefined
        ? statement(db, "SELECT state, n FROM state_counts").all()
        : statement(db, "SELECT state, count(*) AS n FROM requests WHERE workspace = ? GROUP BY state").all(filters.workspace)
  ) as { state: State; n: number }[];
  for (const row of rows) if (row.state in counts) counts[row.state] = row.n;
  return counts;
}
