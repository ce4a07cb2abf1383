"use client";

import "uplot/dist/uPlot.min.css";
import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import type uPlot from "uplot";
import { clockLabels, clockPoint, spansDays } from "./clockAxis";

export interface ChartSeries {
  label: string;
  /** A CSS custom property of the theme (`--completed`): the chart follows the page's colours. */
  color: string;
  values: (number | null)[];
  dashed?: boolean;
  /** A count per interval or a level held until the next point: drawn as steps. */
  stepped?: boolean;
  /** Line width in CSS pixels (2). */
  width?: number;
}

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

/** Tick steps for whole numbers: 1, 2, 5, 10, 20, 50, ... */
const WHOLE_STEPS = Array.from({ length: 24 }, (_, i) => [1, 2, 5][i % 3]! * 10 ** Math.floor(i / 3));
const S = 1000;
const M = 60 * S;
const H = 60 * M;
/** Tick steps for durations in ms, at the steps a clock reads. */
const DURATION_STEPS = [
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  500,
  S,
  2 * S,
  5 * S,
  10 * S,
  15 * S,
  30 * S,
  M,
  2 * M,
  5 * M,
  10 * M,
  15 * M,
  30 * M,
  H,
  2 * H,
  6 * H,
  12 * H,
  24 * H,
];

/** The latest point with something to say (a count above zero, a figure), else the last. */
function latestWithData(series: ChartSeries[], count: number): number {
  for (let i = count - 1; i >= 0; i--) if (series.some((s) => s.values[i] !== null && s.values[i] !== undefined && s.values[i] !== 0)) return i;
  return count - 1;
}

const HEIGHT = 180;

/**
 * A time series chart (uPlot, on a canvas) that a keyboard can read: focus it, then ← and → (Home,
 * End) move through the points, and the line under it says the point's values in words. Without a
 * point chosen, it says the latest.
 */
export function TimeChart({ label, unit, times, pointMs, series, format, whole = false, durations = false, hint, levels = false }: TimeChartProps) {
  const holder = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
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
  // The newest values, for the chart made after its module loads (effects run before that).
  const latest = useRef(data);
  // The chart is made again only when what it draws changes (its series, its unit), not on new values.
  const shape = [unit, whole, durations, ...series.map((s) => `${s.label}:${s.color}`)].join("|");

  useEffect(() => {
    let disposed = false;
    let observer: ResizeObserver | null = null;
    void import("uplot").then(({ default: UPlot }) => {
      const element = holder.current;
      if (disposed || !element) return;
      const css = getComputedStyle(document.documentElement);
      const color = (name: string) => css.getPropertyValue(name).trim() || "#888";
      const axis = { stroke: color("--muted"), grid: { stroke: color("--border"), width: 1 }, ticks: { stroke: color("--border"), width: 1 } };
      plot.current = new UPlot(
        {
          width: Math.max(200, element.clientWidth),
          height: HEIGHT,
          ms: 1,
          legend: { show: false },
          cursor: { y: false, drag: { x: false, y: false } },
          scales: { y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
          axes: [
            {
              ...axis,
              values: (u, ticks) => {
                const labels = clockLabels(ticks, spansDays(u.scales.x!.min ?? 0, u.scales.x!.max ?? 0));
                setAxisTimes(labels.map((text) => text.replace("\n", " ")).join(", "));
                return labels;
              },
            },
            {
              ...axis,
              size: 64,
              label: unit,
              labelSize: 16,
              values: (_u, ticks) => ticks.map(format),
              incrs: whole ? WHOLE_STEPS : durations ? DURATION_STEPS : undefined,
            },
          ],
          series: [
            {},
            ...series.map((s) => ({
              label: s.label,
              stroke: color(s.color),
              width: s.width ?? 2,
              dash: s.dashed ? [6, 4] : undefined,
              paths: s.stepped ? UPlot.paths.stepped!({ align: 1 }) : undefined,
              points: { show: !s.stepped, size: 4 },
            })),
          ],
          hooks: { setCursor: [(u) => setChosen(u.cursor.idx === null || u.cursor.idx === undefined ? null : (latest.current[0][u.cursor.idx] ?? null))] },
        },
        latest.current,
        element,
      );
      observer = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(200, element.clientWidth), height: HEIGHT }));
      observer.observe(element);
    });
    return () => {
      disposed = true;
      observer?.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
    // shape stands for unit, whole and the series; a format is fixed per chart; values come through setData below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape]);

  useEffect(() => {
    latest.current = data;
    plot.current?.setData(data);
  });

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
