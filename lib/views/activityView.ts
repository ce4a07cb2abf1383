import { ACTIVITY_RANGES, binPercentile, LIVE_STATES, type ActivityRange, type WorkspaceMatch } from "../model/activity";
import type { AttemptEnd } from "../model/attempts";
import type { ActivityRow, LiveStateCounts } from "../db/queries/activity";
import type { Reader } from "../roles/reader";

const OUTCOMES = ["completed", "failed", "timed out", "released", "stopped"] as const satisfies readonly AttemptEnd[];

/**
 * The charts' figures over a range, one value per point (an interval of `pointMs`), in columns as
 * the chart library takes them. The last point is the interval now running.
 */
export interface ActivityView {
  range: ActivityRange;
  pointMs: number;
  /** Each point's start (ms). */
  times: number[];
  /** Attempts that ended in each point, by how. */
  ended: Record<AttemptEnd, number[]>;
  /** Queue wait and processing time of the claims and ended attempts in each point (ms; null where there were none). */
  wait: { p50: (number | null)[]; p95: (number | null)[] };
  run: { p50: (number | null)[]; p95: (number | null)[] };
  /** How many requests were in each live state at each point's end (now, for the last). */
  states: Record<(typeof LIVE_STATES)[number], number[]>;
  /** The attempts ended over the whole range, by how. */
  totals: Record<AttemptEnd, number>;
  /** Drawn from: the state folder's requests, or the lifecycles received over OpenTelemetry. */
  source: "folder" | "otel";
  /** Received lifecycles only: what the model calls of those that ended in each point used (USD; tokens in, with cache, and out). */
  usage: { costUsd: number[]; inputTokens: number[]; outputTokens: number[] } | null;
}

/** The start of each of `count` points of `pointMs`, the last one being `lastPoint`. */
function pointTimes(lastPoint: number, count: number, pointMs: number): number[] {
  return Array.from({ length: count }, (_, i) => (lastPoint - count + 1 + i) * pointMs);
}

function totalsOf(ended: ActivityView["ended"]): ActivityView["totals"] {
  return Object.fromEntries(OUTCOMES.map((how) => [how, ended[how].reduce((a, b) => a + b, 0)])) as ActivityView["totals"];
}

export type ActivityRead = (window: { spanMs: number; pointMs: number; from: number; to: number }) => { rows: ActivityRow[]; live: LiveStateCounts };

/** The activity of the last `range`, for every workspace or those `match` picks, from the index's rollups. */
export function activityView(reader: Reader, range: ActivityRange, match: WorkspaceMatch, now = reader.options.now()): ActivityView {
  return buildActivity(range, now, "folder", (window) => reader.activity({ ...window, match }));
}

/** The charts of what `read` gives for the points of `range` up to `now`. */
export function buildActivity(range: ActivityRange, now: number, source: ActivityView["source"], read: ActivityRead): ActivityView {
  const { rangeMs, pointMs, spanMs } = ACTIVITY_RANGES[range];
  const count = rangeMs / pointMs;
  const lastPoint = Math.floor(now / pointMs);
  const firstPoint = lastPoint - count + 1;
  const times = pointTimes(lastPoint, count, pointMs);
  const zeros = () => new Array<number>(count).fill(0);
  const ended = Object.fromEntries(OUTCOMES.map((how) => [how, zeros()])) as Record<AttemptEnd, number[]>;
  const net = Object.fromEntries(LIVE_STATES.map((state) => [state, zeros()])) as Record<(typeof LIVE_STATES)[number], number[]>;
  const bins = { wait: times.map(() => new Map<number, number>()), run: times.map(() => new Map<number, number>()) };
  const usage = source === "otel" ? { costUsd: zeros(), inputTokens: zeros(), outputTokens: zeros() } : null;
  const usageOf = { cost: "costUsd", "tokens:in": "inputTokens", "tokens:out": "outputTokens" } as const;

  const { rows, live } = read({ spanMs, pointMs, from: times[0]!, to: now });
  for (const row of rows) {
    const i = row.point - firstPoint;
    if (i < 0 || i >= count) continue;
    const [kind, name] = row.metric.split(":", 2) as [string, string | undefined];
    if (kind === "end" && name && name in ended) ended[name as AttemptEnd][i]! += row.n;
    else if (kind === "state" && name && name in net) net[name as keyof typeof net][i]! += row.n;
    else if (kind === "wait" || kind === "run") bins[kind][i]!.set(row.bin, (bins[kind][i]!.get(row.bin) ?? 0) + row.n);
    else if (usage && row.metric in usageOf) usage[usageOf[row.metric as keyof typeof usageOf]][i]! += row.n;
  }

  // A count at a point's end is the count now less what changed after it.
  const states = Object.fromEntries(
    LIVE_STATES.map((state) => {
      const series = zeros();
      let value = live[state];
      for (let i = count - 1; i >= 0; i--) {
        series[i] = Math.max(0, value);
        value -= net[state][i]!;
      }
      return [state, series];
    }),
  ) as ActivityView["states"];

  const percentile = (kind: "wait" | "run", q: number) => bins[kind].map((histogram) => binPercentile(histogram, q));
  return {
    range,
    pointMs,
    times,
    ended,
    wait: { p50: percentile("wait", 0.5), p95: percentile("wait", 0.95) },
    run: { p50: percentile("run", 0.5), p95: percentile("run", 0.95) },
    states,
    totals: totalsOf(ended),
    source,
    // + 0: a sum of dollars added and taken away may leave a crumb below zero, which is no cost (-0 would say otherwise).
    usage: usage && { ...usage, costUsd: usage.costUsd.map((usd) => Math.round(usd * 1e6) / 1e6 + 0) },
  };
}

/**
 * The view moved on to the interval holding `now`, without asking the server: the intervals begun
 * since it was computed have seen no activity it knows of (a change would have refetched it), and
 * the live states keep their last counts. What a tab at rest draws as time passes.
 */
export function advanceActivity(view: ActivityView, now: number): ActivityView {
  const count = view.times.length;
  const lastPoint = Math.floor(now / view.pointMs);
  const steps = lastPoint - Math.floor(view.times[count - 1]! / view.pointMs);
  if (steps <= 0 || count === 0) return view;
  const shift = <T>(series: T[], fill: (last: T) => T): T[] => {
    const kept = series.slice(Math.min(steps, count));
    while (kept.length < count) kept.push(fill(series[count - 1]!));
    return kept;
  };
  const ended = Object.fromEntries(OUTCOMES.map((how) => [how, shift(view.ended[how], () => 0)])) as ActivityView["ended"];
  const none = () => null;
  return {
    ...view,
    times: pointTimes(lastPoint, count, view.pointMs),
    ended,
    wait: { p50: shift(view.wait.p50, none), p95: shift(view.wait.p95, none) },
    run: { p50: shift(view.run.p50, none), p95: shift(view.run.p95, none) },
    states: Object.fromEntries(LIVE_STATES.map((state) => [state, shift(view.states[state], (last) => last)])) as ActivityView["states"],
    totals: totalsOf(ended),
    usage: view.usage && {
      costUsd: shift(view.usage.costUsd, () => 0),
      inputTokens: shift(view.usage.inputTokens, () => 0),
      outputTokens: shift(view.usage.outputTokens, () => 0),
    },
  };
}

/**
 * The view with its live states' latest point set to `counts`, the counts the state cards show: the
 * cards and the chart's "now" then say one moment's figures, whichever of their two reads came last.
 */
export function withLevelsNow(view: ActivityView, counts: Readonly<Partial<Record<(typeof LIVE_STATES)[number], number>>>): ActivityView {
  const last = view.times.length - 1;
  if (last < 0) return view;
  const states = Object.fromEntries(
    LIVE_STATES.map((state) => [state, view.states[state].map((n, i) => (i === last ? (counts[state] ?? n) : n))]),
  ) as ActivityView["states"];
  return { ...view, states };
}
