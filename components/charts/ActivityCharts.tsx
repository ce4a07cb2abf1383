"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ACTIVITY_RANGES, type ActivityRange, type WorkspaceMatch } from "@/lib/model/activity";
import { formatDuration } from "@/lib/model/duration";
import { advanceActivity, type ActivityView } from "@/lib/views/activityView";
import { usePollInterval } from "../data/LiveFeed";
import { useNow } from "../data/useNow";
import { activityOptions } from "../data/queries";
import { TimeChart, type ChartSeries } from "./TimeChart";

const RANGE_LABEL: Record<ActivityRange, string> = { "1h": "1 hour", "24h": "24 hours", "7d": "7 days" };
/** How often the charts look at the clock, to move on to a new interval (locally: no request). */
const CLOCK_MS = 10_000;

function per(pointMs: number): string {
  return pointMs >= 3_600_000 ? `${pointMs / 3_600_000}h` : `${pointMs / 60_000}m`;
}

const count = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));
const duration = (value: number) => formatDuration(value);

/** p50 solid, p95 dashed, in one colour. */
function percentiles(color: string, values: ActivityView["wait"]): ChartSeries[] {
  return [
    { label: "p50", color, values: values.p50 },
    { label: "p95", color, values: values.p95, dashed: true },
  ];
}

/** The four charts of a view: what each draws, in what unit. */
function charts(data: ActivityView): { label: string; unit: string; hint?: string; format: (value: number) => string; whole?: boolean; durations?: boolean; levels?: boolean; series: ChartSeries[] }[] {
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
      label: "Requests by state",
      unit: "requests",
      format: count,
      whole: true,
      levels: true,
      // Each line is drawn over the one before, narrower, so where two states hold the same count
      // (a burst claimed as it arrives) both colours still show.
      series: (["queued", "processing", "created"] as const).map((state, i) => ({ label: state, color: `--${state}`, values: data.states[state], stepped: true, width: [5, 3, 1.5][i] })),
    },
    { label: "Queue wait", unit: "time", hint: "from entering the queue to each claim", format: duration, durations: true, series: percentiles("--queued", data.wait) },
    {
      label: "Processing time",
      unit: "time",
      hint: "each attempt, from its claim until it ended (a released one: until the monitor found its worker gone)",
      format: duration,
      durations: true,
      series: percentiles("--processing", data.run),
    },
  ];
}

function what(match: WorkspaceMatch): string {
  if (match === null) return "every workspace";
  return "workspace" in match ? `workspace ${match.workspace}` : `workspaces starting with ${match.workspacePrefix}`;
}

/**
 * Attempts ended, queue wait, processing time and requests by state over the last hour, day or week,
 * for every workspace or the table's workspace filter; kept current by the event stream.
 */
export function ActivityCharts({ initial, match, note }: { initial?: ActivityView; match: WorkspaceMatch; note?: string }) {
  const [range, setRange] = useState<ActivityRange>(initial?.range ?? "1h");
  const pollMs = usePollInterval();
  const now = useNow(CLOCK_MS);
  const { data: fetched, error } = useQuery({
    ...activityOptions(range, match),
    initialData: range === initial?.range && match === null ? initial : undefined,
    placeholderData: keepPreviousData,
    refetchInterval: pollMs,
  });
  if (!fetched) {
    return (
      <section aria-label="Activity" className="activity">
        {error ? <p role="alert" className="error-text">The charts could not be loaded: {error.message}</p> : <p className="muted">Loading the charts…</p>}
      </section>
    );
  }
  // A change refetches; time passing only moves the intervals on.
  const data = advanceActivity(fetched, now);
  const { totals } = data;

  return (
    <section aria-labelledby="activity" className="activity">
      <div className="activity-head">
        <h2 id="activity">Activity</h2>
        <div role="group" aria-label="Chart range" className="range-buttons">
          {(Object.keys(ACTIVITY_RANGES) as ActivityRange[]).map((key) => (
            <button key={key} type="button" aria-pressed={range === key} onClick={() => setRange(key)}>
              {key}
            </button>
          ))}
        </div>
        <p className="muted" aria-label="Activity summary">
          Attempts ended in the last {RANGE_LABEL[data.range]}, {what(match)}: {totals.completed} completed, {totals.failed} failed, {totals["timed out"]} timed out
          {totals.released ? `, ${totals.released} released (worker gone)` : ""}
          {totals.stopped ? `, ${totals.stopped} stopped by hand` : ""} (each attempt of a retried request counts). Wait and processing percentiles come from a histogram: within 10% of the exact figure.
          {note ? ` ${note}` : ""}
        </p>
      </div>
      <div className="charts">
        {charts(data).map((chart) => (
          <TimeChart key={chart.label} {...chart} times={data.times} pointMs={data.pointMs} />
        ))}
      </div>
    </section>
  );
}
