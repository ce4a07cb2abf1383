"use client";

import { useState, type KeyboardEvent } from "react";
import type uPlot from "uplot";
import { clockPoint } from "./clockAxis";
import { useTimePlot, type ChartSeries } from "./useTimePlot";

interface TimeChartProps {
  label: string;
  /** What a value is, for the axis and the readout: "attempts per 1m", "requests". */
  unit: string;
  times: number[];
  pointMs: number;
  series: ChartSeries[];
  format: (value: number) => string;
  /** Whole numbers only (counts): no ticks between them. */
  whole?: boolean;
  /** Values in ms: ticks at round durations (1s, 30s, 1m, ...). */
  durations?: boolean;
  /** What a value is, in a few words under the title. */
  hint?: string;
  /** The values are levels (how many there were), so every point has something to say, zero too. */
  levels?: boolean;
}

/** The latest point with something to say (a count above zero, a figure), else the last. */
function latestWithData(series: ChartSeries[], count: number): number {
  for (let i = count - 1; i >= 0; i--) if (series.some((s) => s.values[i] !== null && s.values[i] !== undefined && s.values[i] !== 0)) return i;
  return count - 1;
}

/**
 * A time series chart (uPlot, on a canvas) that a keyboard can read: focus it, then ← and → (Home,
 * End) move through the points, and the line under it says the point's values in words. Without a
 * point chosen, it says the latest.
 */
export function TimeChart({ label, unit, times, pointMs, series, format, whole = false, durations = false, hint, levels = false }: TimeChartProps) {
  // The point chosen by keyboard or pointer, by its time: it stays put as new points come.
  const [chosen, setChosen] = useState<number | null>(null);
  // The time axis's labels as drawn (on the canvas), for a reader that cannot see it.
  const [axisTimes, setAxisTimes] = useState("");
  const found = chosen === null ? -1 : times.indexOf(chosen);
  const index = found < 0 ? null : found;
  // One more point at the end of the current interval, so its step is drawn as wide as the others.
  const data = [
    [...times, (times.at(-1) ?? 0) + pointMs],
    ...series.map((s) => [...s.values, s.stepped ? (s.values.at(-1) ?? null) : null]),
  ] as uPlot.AlignedData;
  const { holder, plot } = useTimePlot({ unit, series, format, whole, durations }, data, setChosen, setAxisTimes);

  const move = (event: KeyboardEvent<HTMLDivElement>) => {
    const last = times.length - 1;
    const current = index ?? (levels ? last : latestWithData(series, times.length));
    const next = { ArrowLeft: current - 1, ArrowRight: current + 1, Home: 0, End: last }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const point = Math.min(last, Math.max(0, next));
    setChosen(times[point]!);
    const u = plot.current;
    if (u) u.setCursor({ left: u.valToPos(times[point]!, "x"), top: u.bbox.height / devicePixelRatio / 2 }, false);
  };

  const at = index ?? (levels ? times.length - 1 : latestWithData(series, times.length));
  const values = series.map((s) => {
    const value = s.values[at];
    return `${s.label} ${value === null || value === undefined ? "—" : format(value)}`;
  });
  const time = clockPoint(times[at] ?? 0, pointMs);
  const when = index !== null ? time : at === times.length - 1 ? `now (${time})` : `latest (${time})`;

  return (
    <figure className="chart">
      <figcaption>
        {label} <span className="muted">({unit})</span>
        {hint && <span className="chart-hint">{hint}</span>}
        <span className="chart-key">
          {series.map((s) => (
            <span key={s.label}>
              <i style={{ borderColor: `var(${s.color})`, borderStyle: s.dashed ? "dashed" : "solid" }} aria-hidden="true" />
              {s.label}
            </span>
          ))}
        </span>
      </figcaption>
      <div
        ref={holder}
        className="chart-plot"
        tabIndex={0}
        role="group"
        aria-label={`${label}: ← and → move through the points`}
        onKeyDown={move}
        onBlur={() => setChosen(null)}
        onMouseLeave={() => setChosen(null)}
      />
      <p className="sr-only" aria-label={`${label}: times on the axis`}>
        {axisTimes}
      </p>
      {/* Announced while the chart is being read, not on every live update of four charts. */}
      {/* Its time is the viewer's clock: a minute may tick between the server's render and the browser's. */}
      <p className="chart-readout" aria-live={index === null ? "off" : "polite"} aria-label={`${label} at the point shown`} suppressHydrationWarning>
        {when}: {values.join(", ")}
      </p>
    </figure>
  );
}
