import { LIVE_STATES, type ActivityRow, type LiveStateCounts, type WorkspaceMatch } from "../../../model/activity";
import type Database from "better-sqlite3";
import { binOf, stateBefore } from "../activityRollup";

/**
 * The charts' rows of the telemetry store's lifecycles (turns, model calls, messages), in the shape
 * the index's rollup gives them (lib/db/queries/activity.ts), so one view draws both: each
 * lifecycle's times are its steps (created at its start, queued, claimed, ended); the cost and
 * tokens of those that ended, by when they ended. Read from the store's rollups (store/activityRollup.ts):
 * a chart's cost does not grow with the lifecycles.
 */
interface TelemetryActivityOptions {
  /** The rollup read (one of ROLLUP_SPANS_MS): pointMs is a multiple of it. */
  spanMs: number;
  pointMs: number;
  from: number;
  to: number;
  match: WorkspaceMatch;
}

/** The workspace a lifecycle shows under (the `otel` source's expression: its service). */
const WORKSPACE = "coalesce(reqwatch_name(service, 64), 'otel')";

function matchCondition(match: WorkspaceMatch): { sql: string; params: string[] } {
  if (match === null) return { sql: "", params: [] };
  if ("workspace" in match) return { sql: ` AND ${WORKSPACE} = ?`, params: [match.workspace] };
  return { sql: ` AND substr(${WORKSPACE}, 1, ?) = ?`, params: [String(match.workspacePrefix.length), match.workspacePrefix] };
}

export function telemetryActivityRows(db: Database.Database, options: TelemetryActivityOptions): { rows: ActivityRow[]; live: LiveStateCounts } {
  const rolledUp = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'activity'").get() !== undefined;
  // A store no receiver has opened since the rollups came is counted from its lifecycles.
  const rows = rolledUp ? rollupRows(db, options) : countedActivityRows(db, options);
  return { rows, live: liveCounts(db, options.match) };
}

/**
 * The rollup's rows from `from` to `to`: its last interval may hold steps stamped after `to` (a
 * clock ahead of ours), which a chart up to now leaves out, as counting the lifecycles does: those
 * few are counted and taken away.
 */
function rollupRows(db: Database.Database, options: TelemetryActivityOptions): ActivityRow[] {
  const { sql: matched, params } = matchCondition(options.match);
  const lastBucket = Math.floor(options.to / options.spanMs);
  const rows = db
    .prepare(
      // Integer division: a number bound from JavaScript is a REAL to SQLite.
      `SELECT bucket / CAST(? AS INTEGER) AS point, metric, bin, sum(n) AS n FROM activity
       WHERE span = ? AND bucket >= ? AND bucket <= ?${matched}
       GROUP BY point, metric, bin HAVING sum(n) != 0`,
    )
    .all(options.pointMs / options.spanMs, options.spanMs, Math.floor(options.from / options.spanMs), lastBucket, ...params) as ActivityRow[];
  const ahead = stepRows(db, { ...options, from: options.to, to: (lastBucket + 1) * options.spanMs }, "open");
  return [...rows, ...ahead.map((row) => ({ ...row, n: -row.n }))];
}

/** The same rows counted from the lifecycles whose steps fall from `from` to `to`: what the rollups must add up to. */
export function countedActivityRows(db: Database.Database, options: Omit<TelemetryActivityOptions, "spanMs">): ActivityRow[] {
  return stepRows(db, options, "closed");
}

/**
 * The steps from `from` to `to` (both in, or with "open" neither), per point, grouped in SQL: a
 * point of a busy hour is one row per outcome and histogram bin, not its lifecycles.
 */
function stepRows(db: Database.Database, options: Omit<TelemetryActivityOptions, "spanMs">, bounds: "closed" | "open"): ActivityRow[] {
  const { sql: matched, params } = matchCondition(options.match);
  const point = (column: string) => `CAST(${column} / ? AS INTEGER)`;
  const within = (column: string) => (bounds === "closed" ? `${column} >= ? AND ${column} <= ?${matched}` : `${column} > ? AND ${column} < ?${matched}`);
  const args = [options.pointMs, options.from, options.to, ...params];
  const read = (sql: string) => db.prepare(sql).all(...args) as ActivityRow[];
  const before = stateBefore("l");
  return [
    // Created at its start.
    ...read(
      `SELECT ${point("started_at")} AS point, 'state:created' AS metric, 0 AS bin, count(*) AS n FROM lifecycles l WHERE ${within("started_at")} GROUP BY point`,
    ),
    // Queued: out of created, into queued.
    ...read(
      `SELECT ${point("queued_at")} AS point, 'state:queued' AS metric, 0 AS bin, count(*) AS n FROM lifecycles l WHERE ${within("queued_at")} GROUP BY point`,
    ).flatMap((row) => [row, { ...row, metric: "state:created", n: -row.n }]),
    // Claimed: its wait, out of queued (or created), into processing.
    ...read(
      `SELECT ${point("processing_at")} AS point, 'wait' AS metric, ${binOf("processing_at - coalesce(queued_at, started_at)")} AS bin, count(*) AS n, ${before.processing} AS left
       FROM lifecycles l WHERE ${within("processing_at")} GROUP BY point, bin, left`,
    ).flatMap((row) => {
      const { left, ...wait } = row as ActivityRow & { left: string };
      return [wait, { ...wait, metric: "state:processing", bin: 0 }, { ...wait, metric: `state:${left}`, bin: 0, n: -wait.n }];
    }),
    // Ended: how, the attempt's run time, out of the state it was in, and what its calls used.
    ...read(
      `SELECT ${point("finished_at")} AS point, 'end:' || state AS metric, CASE WHEN processing_at IS NULL THEN NULL ELSE ${binOf("finished_at - processing_at")} END AS bin, count(*) AS n,
         ${before.finished} AS left, sum(cost_usd) AS cost, sum(input_tokens + cache_read_tokens + cache_write_tokens) AS tokensIn, sum(output_tokens) AS tokensOut
       FROM lifecycles l WHERE ${within("finished_at")} GROUP BY point, state, bin, left`,
    ).flatMap((row) => {
      const { left, cost, tokensIn, tokensOut, ...end } = row as ActivityRow & { left: string; cost: number; tokensIn: number; tokensOut: number };
      return [
        { ...end, bin: 0 },
        ...(end.bin === null ? [] : [{ ...end, metric: "run" }]),
        { ...end, metric: `state:${left}`, bin: 0, n: -end.n },
        { ...end, metric: "cost", bin: 0, n: cost },
        { ...end, metric: "tokens:in", bin: 0, n: tokensIn },
        { ...end, metric: "tokens:out", bin: 0, n: tokensOut },
      ];
    }),
  ];
}

/** How many lifecycles are in each of LIVE_STATES now: the last point of the chart of states. */
function liveCounts(db: Database.Database, match: WorkspaceMatch): LiveStateCounts {
  const { sql: matched, params } = matchCondition(match);
  const live = Object.fromEntries(LIVE_STATES.map((state) => [state, 0])) as LiveStateCounts;
  const counts = db
    .prepare(`SELECT state, count(*) AS n FROM lifecycles WHERE state IN (${LIVE_STATES.map(() => "?").join(", ")})${matched} GROUP BY state`)
    .all(...LIVE_STATES, ...params) as { state: keyof LiveStateCounts; n: number }[];
  for (const row of counts) live[row.state] = row.n;
  return live;
}
