import { BINS_PER_OCTAVE, LIVE_STATES, type ActivityRow, type LiveStateCounts, type WorkspaceMatch } from "../../../model/activity";
import type Database from "better-sqlite3";

/**
 * The charts' rows from the telemetry store's lifecycles (turns, model calls, messages), in the
 * shape the index's rollup gives them (lib/db/queries/activity.ts), so one view draws both: each
 * lifecycle's times are its steps (created at its start, queued, claimed, ended), counted per point
 * by the store's indexes on those times; the cost and tokens of those that ended, by when they ended.
 * Grouped in SQL: a point of a busy hour is one row per outcome and histogram bin, not its lifecycles.
 */
interface TelemetryActivityOptions {
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

/** A duration's histogram bin, as durationBin (lib/model/activity.ts) computes it. */
const bin = (ms: string) => `CASE WHEN ${ms} < 1 THEN -1 ELSE CAST(floor(log2(${ms}) * ${BINS_PER_OCTAVE}) AS INTEGER) END`;

/** The state a lifecycle was in just before `at` (one of its times): the last of its earlier steps. */
const STATE_BEFORE = {
  processing: "CASE WHEN queued_at IS NOT NULL THEN 'queued' ELSE 'created' END",
  finished: "CASE WHEN processing_at IS NOT NULL THEN 'processing' WHEN queued_at IS NOT NULL THEN 'queued' ELSE 'created' END",
};

export function telemetryActivityRows(db: Database.Database, options: TelemetryActivityOptions): { rows: ActivityRow[]; live: LiveStateCounts } {
  const { sql: matched, params } = matchCondition(options.match);
  const point = (column: string) => `CAST(${column} / ? AS INTEGER)`;
  const within = (column: string) => `${column} >= ? AND ${column} <= ?${matched}`;
  const args = [options.pointMs, options.from, options.to, ...params];
  const read = (sql: string) => db.prepare(sql).all(...args) as ActivityRow[];
  const rows = [
    // Created at its start.
    ...read(
      `SELECT ${point("started_at")} AS point, 'state:created' AS metric, 0 AS bin, count(*) AS n FROM lifecycles WHERE ${within("started_at")} GROUP BY point`,
    ),
    // Queued: out of created, into queued.
    ...read(
      `SELECT ${point("queued_at")} AS point, 'state:queued' AS metric, 0 AS bin, count(*) AS n FROM lifecycles WHERE ${within("queued_at")} GROUP BY point`,
    ).flatMap((row) => [row, { ...row, metric: "state:created", n: -row.n }]),
    // Claimed: its wait, out of queued (or created), into processing.
    ...read(
      `SELECT ${point("processing_at")} AS point, 'wait' AS metric, ${bin("processing_at - coalesce(queued_at, started_at)")} AS bin, count(*) AS n, ${STATE_BEFORE.processing} AS left
       FROM lifecycles WHERE ${within("processing_at")} GROUP BY point, bin, left`,
    ).flatMap((row) => {
      const { left, ...wait } = row as ActivityRow & { left: string };
      return [wait, { ...wait, metric: "state:processing", bin: 0 }, { ...wait, metric: `state:${left}`, bin: 0, n: -wait.n }];
    }),
    // Ended: how, the attempt's run time, out of the state it was in, and what its calls used.
    ...read(
      `SELECT ${point("finished_at")} AS point, 'end:' || state AS metric, CASE WHEN processing_at IS NULL THEN NULL ELSE ${bin("finished_at - processing_at")} END AS bin, count(*) AS n,
         ${STATE_BEFORE.finished} AS left, sum(cost_usd) AS cost, sum(input_tokens + cache_read_tokens + cache_write_tokens) AS tokensIn, sum(output_tokens) AS tokensOut
       FROM lifecycles WHERE ${within("finished_at")} GROUP BY point, state, bin, left`,
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
  const live = Object.fromEntries(LIVE_STATES.map((state) => [state, 0])) as LiveStateCounts;
  const counts = db
    .prepare(`SELECT state, count(*) AS n FROM lifecycles WHERE state IN (${LIVE_STATES.map(() => "?").join(", ")})${matched} GROUP BY state`)
    .all(...LIVE_STATES, ...params) as { state: keyof LiveStateCounts; n: number }[];
  for (const row of counts) live[row.state] = row.n;
  return { rows, live };
}
