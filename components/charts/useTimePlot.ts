"use client";

import "uplot/dist/uPlot.min.css";
import { useEffect, useRef, type RefObject } from "react";
import type uPlot from "uplot";
import { clockLabels, spansDays } from "./clockAxis";

/** One line of a time chart: its values at the chart's times. */
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

const HEIGHT = 180;

/** What a chart draws, as against the values it draws. */
interface PlotShape {
  unit: string;
  series: ChartSeries[];
  format: (value: number) => string;
  whole: boolean;
  durations: boolean;
}

/**
 * The uPlot chart in `holder`, made once its module loads and again only when its shape changes;
 * new values are set on it. It tells the time under the pointer, and the time axis's labels as drawn
 * (`onCursor` and `onAxisTimes` must keep their identity: state setters).
 */
export function useTimePlot(
  { unit, series, format, whole, durations }: PlotShape,
  data: uPlot.AlignedData,
  onCursor: (time: number | null) => void,
  onAxisTimes: (labels: string) => void,
): { holder: RefObject<HTMLDivElement | null>; plot: RefObject<uPlot | null> } {
  const holder = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
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
                onAxisTimes(labels.map((text) => text.replace("\n", " ")).join(", "));
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
          hooks: { setCursor: [(u) => onCursor(u.cursor.idx === null || u.cursor.idx === undefined ? null : (latest.current[0][u.cursor.idx] ?? null))] },
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
    // shape stands for unit, whole and the series; a format is fixed per chart, and so are the callbacks (state setters);
    // values come through setData below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape]);

  useEffect(() => {
    latest.current = data;
    plot.current?.setData(data);
  });

  return { holder, plot };
}
