"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ACTIVITY_RANGES, type ActivityRange, type WorkspaceMatch } from "@/lib/model/activity";
import { formatDuration } from "@/lib/model/duration";
import { formatUsd } from "@/lib/model/money";
import { advanceActivity, withLevelsNow, type ActivityView } from "@/lib/views/activityView";
import { usePollInterval } from "../data/LiveFeed";
import { useNow } from "../data/useNow";
import { activityOptions, countsOptions } from "../data/queries";
import { TimeChart } from "./TimeChart";
import type { ChartSeries } from "./useTimePlot";

const RANGE_LABEL: Record<ActivityRange, string> = { "1h": "1 hour", "24h": "24 hours", "7d": "7 days" };
/** How often the charts look at the clock, to move on to a new interval (locally: no request). */
const CLOCK_MS = 10_000;

function per(pointMs: number): string {
  return pointMs >= 3_600_000 ? `${pointMs / 3_600_000}h` : `${pointMs / 60_000}m`;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const count = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));
const duration = (value: number) => formatDuration(value);

/** p50 solid, p95 dashed, in one colour. */
function percentiles(color: string, values: ActivityView["wait"]): ChartSeries[] {
  return [
    { label: "p50", color, values: values.p50 },
    { label: "p95", color, values: values.p95, dashed: true },
  ];
}

type Chart = {
  label: string;
  unit: string;
  hint?: string;
  format: (value: number) => string;
  whole?: boolean;
  durations?: boolean;
  levels?: boolean;
  series: ChartSeries[];
};

/** What the received lifecycles' model calls used: tokens and cost, each point holding those that ended in it. */
function usageCharts(data: ActivityView): Chart[] {
  if (!data.usage) return [];
  const hint = "of the turns, calls and messages that ended in each interval";
  return [
    {
      label: "Tokens",
      unit: `per ${per(data.pointMs)}`,
      hint,
      format: (value) => Math.round(value).toLocaleString("en-US"),
      whole: true,
      series: [
        { label: "in (with cache)", color: "--queued", values: data.usage.inputTokens, stepped: true },
        { label: "out", color: "--processing", values: data.usage.outputTokens, stepped: true },
      ],
    },
    {
      label: "Cost",
      unit: `USD per ${per(data.pointMs)}`,
      hint,
      format: formatUsd,
      series: [{ label: "cost", color: "--completed", values: data.usage.costUsd, stepped: true }],
    },
  ];
}

/** The four charts of a view (six for received lifecycles): what each draws, in what unit. */
function charts(data: ActivityView): Chart[] {
  const received = data.source === "otel";
  return [
    {
      label: "Attempts ended",
      unit: `per ${per(data.pointMs)}`,
      format: count,
      whole: true,
      series: [
        { label: "completed", color: "--completed", values: data.ended.completed, stepped: true },
        { label: "failed", color: "--failed", values: data.ended.failed, stepped: true },
        { label: "timed out", color: "--timeout", values: data.ended["timed out"], stepped: true },
        { label: "released", color: "--created", values: data.ended.released, stepped: true },
        { label: "stopped", color: "--muted", values: data.ended.stopped, stepped: true, dashed: true },
      ],
    },
    {
      label: received ? "Lifecycles by state" : "Requests by state",
      unit: received ? "turns, calls, messages" : "requests",
      format: count,
      whole: true,
      levels: true,
      // Each line is drawn over the one before, narrower, so where two states hold the same count
      // (a burst claimed as it arrives) both colours still show.
      series: (["queued", "processing", "created"] as const).map((state, i) => ({
        label: state,
        color: `--${state}`,
        values: data.states[state],
        stepped: true,
        width: [5, 3, 1.5][i],
      })),
    },
    {
      label: "Queue wait",
      unit: "time",
      hint: "from entering the queue to each claim",
      format: duration,
      durations: true,
      series: percentiles("--queued", data.wait),
    },
    {
      label: "Processing time",
      unit: "time",
      hint: "each attempt, from its claim until it ended (a released one: until the monitor found its worker gone)",
      format: duration,
      durations: true,
      series: percentiles("--processing", data.run),
    },
    ...usageCharts(data),
  ];
}

function what(match: WorkspaceMatch): string {
  if (match === null) return "every workspace";
  return "workspace" in match ? `workspace ${match.workspace}` : `workspaces starting with ${match.workspacePrefix}`;
}

const SOURCE_LABEL: Record<ActivityView["source"], string> = { folder: "State folder", otel: "Received (otel)" };

/**
 * Attempts ended, queue wait, processing time and requests by state over the last hour, day or week,
 * for every workspace or the table's workspace filter; kept current by the event stream. Where the
 * dashboard receives OpenTelemetry (`received`), a person may draw them of the received lifecycles.
 */
export function ActivityCharts({
  initial,
  match,
  note,
  received = false,
}: {
  initial?: ActivityView;
  match: WorkspaceMatch;
  note?: string;
  received?: boolean;
}) {
  const [range, setRange] = useState<ActivityRange>(initial?.range ?? "1h");
  const [source, setSource] = useState<ActivityView["source"]>("folder");
  const pollMs = usePollInterval();
  const now = useNow(CLOCK_MS);
  const { data: fetched, error } = useQuery({
    ...activityOptions(range, match, source),
    initialData: range === initial?.range && match === null && source === initial.source ? initial : undefined,
    placeholderData: keepPreviousData,
    refetchInterval: pollMs,
  });
  // Every workspace of the folder: its requests by state now are the state cards' counts, from their
  // one query (kept current by the event stream), not from this chart's own read a moment apart.
  const cards = match === null && source === "folder";
  const { data: counts } = useQuery({ ...countsOptions(), enabled: cards });
  if (!fetched) {
    return (
      <section aria-label="Activity" className="activity">
        {error ? (
          <p role="alert" className="error-text">
            The charts could not be loaded: {error.message}
          </p>
        ) : (
          <p className="muted">Loading the charts…</p>
        )}
      </section>
    );
  }
  // A change refetches; time passing only moves the intervals on.
  const advanced = advanceActivity(fetched, now);
  const data = cards && counts ? withLevelsNow(advanced, counts) : advanced;
  const { totals } = data;

  return (
    <section aria-labelledby="activity" className="activity">
      <div className="activity-head">
        <h2 id="activity">Activity</h2>
        {received && (
          <div role="group" aria-label="Chart source" className="range-buttons">
            {(Object.keys(SOURCE_LABEL) as ActivityView["source"][]).map((key) => (
              <button key={key} type="button" aria-pressed={source === key} onClick={() => setSource(key)}>
                {SOURCE_LABEL[key]}
              </button>
            ))}
          </div>
        )}
        <div role="group" aria-label="Chart range" className="range-buttons">
          {(Object.keys(ACTIVITY_RANGES) as ActivityRange[]).map((key) => (
            <button key={key} type="button" aria-pressed={range === key} onClick={() => setRange(key)}>
              {key}
            </button>
          ))}
        </div>
        {data.usage ? (
          <p className="muted" aria-label="Activity summary">
            Received over OpenTelemetry, ended in the last {RANGE_LABEL[data.range]}, {what(match)}: {totals.completed} completed, {totals.failed} failed
            (turns, model calls and messages; a call inside a turn is part of its turn), using {sum(data.usage.inputTokens).toLocaleString("en-US")} in /{" "}
            {sum(data.usage.outputTokens).toLocaleString("en-US")} out tokens, {formatUsd(sum(data.usage.costUsd))}. Wait and processing percentiles come from a
            histogram: within 10% of the exact figure.
            {note ? ` ${note}` : ""}
          </p>
        ) : (
          <p className="muted" aria-label="Activity summary">
            Attempts ended in the last {RANGE_LABEL[data.range]}, {what(match)}: {totals.completed} completed, {totals.failed} failed, {totals["timed out"]}{" "}
            timed out
            {totals.released ? `, ${totals.released} released (worker gone)` : ""}
            {totals.stopped ? `, ${totals.stopped} stopped by hand` : ""} (each attempt of a retried request counts). Wait and processing percentiles come from
            a histogram: within 10% of the exact figure.
            {note ? ` ${note}` : ""}
          </p>
        )}
      </div>
      <div className="charts">
        {charts(data).map((chart) => (
          <TimeChart key={chart.label} {...chart} times={data.times} pointMs={data.pointMs} />
        ))}
      </div>
    </section>
  );
}
