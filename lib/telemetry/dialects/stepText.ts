import type { SpanRecord } from "../records";
import type { Step } from "../mapping/changes";

// What every dialect writes a step with: one way to say a duration, to join a summary's parts, to
// keep a detail's said values, and to place a span's step on the timeline.

/** A duration as a step says it: `95 ms`, `1.2 s`. */
export function ms(value: number): string;
export function ms(value: number | undefined): string | undefined;
export function ms(value: number | undefined): string | undefined {
  return value === undefined ? undefined : value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(1)} s`;
}

/** A summary's parts, those said, joined: `claude-sonnet-4-5, 120 in / 30 out, 95 ms`. */
export const join = (...parts: (string | number | undefined | null | false)[]) =>
  parts.filter((part) => part !== undefined && part !== null && part !== false && part !== "").join(", ");

/** A step's detail with what was not said left out. */
export const said = (detail: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(detail).filter(([, value]) => value !== undefined)) as Step["detail"];

/** A span's step, named by the span: from its start to its end, inside its parent span's step. */
export function spanStep(span: SpanRecord, name: string, summary: string, detail: Step["detail"]): Step {
  return {
    key: `span:${span.spanId}`,
    at: span.endMs,
    startAt: span.startMs,
    ...(span.parentSpanId && { parentKey: `span:${span.parentSpanId}` }),
    name,
    summary,
    detail,
  };
}
