import type { IndexDb } from "../openIndex";
import { statement } from "../statements";
import { LIVE_STATES, type ActivityRow, type LiveStateCounts, type WorkspaceMatch } from "../../model/activity";

export type { ActivityRow, LiveStateCounts };
import type { State } from "../../model/states";
import { prefixEnd } from "./listRequests";
import { LIVE_STATES_SQL } from "../ddl";

/** The rollup's count of one metric (and histogram bin) in one point of a chart. */

function workspaceCondition(match: WorkspaceMatch): { sql: string; params: string[] } {
  if (match === null) return { sql: "", params: [] };
  if ("workspace" in match) return { sql: " AND workspace = ?", params: [match.workspace] };
  return { sql: " AND workspace >= ? AND workspace < ?", params: [match.workspacePrefix, prefixEnd(match.workspacePrefix)] };
}

export interface ActivityOptions {
  /** The rollup read (one of ROLLUP_SPANS_MS): pointMs is a multiple of it. */
  spanMs: number;
  pointMs: number;
  from: number;
  to: number;
  match: WorkspaceMatch;
}

/**
 * The activity from `from` to `to` (ms) in points of `pointMs`, read from the rollup of width
 * `spanMs`: a range of the rollup's rows, never the steps.
 */
export function activityRows(db: IndexDb, options: ActivityOptions): ActivityRow[] {
  const { sql, params } = workspaceCondition(options.match);
  return statement(
    db,
    // Integer division: a number bound from JavaScript is a REAL to SQLite.
    `SELECT bucket / CAST(? AS INTEGER) AS point, metric, bin, sum(n) AS n FROM activity
     WHERE span = ? AND bucket >= ? AND bucket <= ?${sql}
     GROUP BY point, metric, bin HAVING sum(n) != 0`,
  ).all(
    options.pointMs / options.spanMs,
    options.spanMs,
    Math.floor(options.from / options.spanMs),
    Math.floor(options.to / options.spanMs),
    ...params,
  ) as ActivityRow[];
}

/** How many requests are in each of LIVE_STATES now: the last point of the chart of states. */
export function liveStateCounts(db: IndexDb, match: WorkspaceMatch): LiveStateCounts {
  const { sql, params } = workspaceCondition(match);
  // Every workspace: the counts the triggers keep; some: a count over the few live rows.
  const rows = statement(
    db,
    match === null
      ? `SELECT state, n FROM state_counts WHERE state IN (${LIVE_STATES_SQL})`
      : `SELECT state, count(*) AS n FROM requests WHERE state IN (${LIVE_STATES_SQL})${sql} GROUP BY state`,
  ).all(...params) as { state: State; n: number }[];
  const counts = Object.fromEntries(LIVE_STATES.map((state) => [state, 0])) as LiveStateCounts;
  for (const row of rows) counts[row.state as keyof LiveStateCounts] = row.n;
  return counts;
}
