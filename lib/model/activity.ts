import { howEnded, type AttemptEnd } from "./attempts";
import type { RequestRecord } from "./requestFormat";
import { stateSteps } from "./stateSteps";
import type { State } from "./states";

/**
 * One step of a request's lifecycle as the charts count it: the state it left and entered, and for
 * a claim the wait before it, for the end of an attempt the time it ran and how it ended.
 */
export interface ActivityStep {
  /** Its place in the request's steps (0 is the creation). */
  seq: number;
  at: number;
  from: State | null;
  to: State;
  /** On a step into processing: how long the request waited before it (in queued, or created). */
  waitMs: number | null;
  /** On a step out of processing: how long that attempt ran. */
  runMs: number | null;
  outcome: AttemptEnd | null;
}

/** The steps of a request (its history, or its lifecycle times for a file without one), with waits and run times. */
export function activitySteps(request: RequestRecord): ActivityStep[] {
  const steps = stateSteps(request);
  return steps.map((step, seq) => {
    const previous = seq > 0 ? steps[seq - 1]! : null;
    const since = previous ? Math.max(0, step.at - previous.at) : null;
    const claim = step.to === "processing" && (previous?.to === "queued" || previous?.to === "created");
    const end = step.from === "processing";
    return {
      seq,
      // Whole ms, so a step falls in one interval of every rollup (a file may carry fractions).
      at: Math.floor(step.at),
      from: step.from,
      to: step.to,
      waitMs: claim ? since : null,
      runMs: end && previous?.to === "processing" ? since : null,
      outcome: end ? howEnded(step) : null,
    };
  });
}

/**
 * Durations are counted in a log histogram of BINS_PER_OCTAVE bins per doubling, so a percentile of
 * any interval is a sum of small rows; read back at a bin's geometric middle it is within 9% of the
 * exact figure. Below 1 ms is bin -1, read as 0.
 */
export const BINS_PER_OCTAVE = 4;

export function durationBin(ms: number): number {
  return ms < 1 ? -1 : Math.floor(Math.log2(ms) * BINS_PER_OCTAVE);
}

function binValue(bin: number): number {
  return bin < 0 ? 0 : 2 ** ((bin + 0.5) / BINS_PER_OCTAVE);
}

/** The widths of the index's rollups of the steps (lib/db/ddl.ts), in ms, finest first: each range reads one. */
export const ROLLUP_SPANS_MS = [60_000, 900_000, 3_600_000] as const;

export const ACTIVITY_RANGES = {
  "1h": { rangeMs: 3_600_000, pointMs: 60_000, spanMs: 60_000 },
  "24h": { rangeMs: 86_400_000, pointMs: 900_000, spanMs: 900_000 },
  "7d": { rangeMs: 604_800_000, pointMs: 3_600_000, spanMs: 3_600_000 },
} as const satisfies Record<string, { rangeMs: number; pointMs: number; spanMs: (typeof ROLLUP_SPANS_MS)[number] }>;

export type ActivityRange = keyof typeof ACTIVITY_RANGES;

export function isActivityRange(value: unknown): value is ActivityRange {
  return typeof value === "string" && Object.hasOwn(ACTIVITY_RANGES, value);
}

/** Which workspaces a chart counts: all, one, or every one that starts with a prefix. */
export type WorkspaceMatch = { workspace: string } | { workspacePrefix: string } | null;

/** The states whose count over time the charts draw: the ones a request passes through. */
export const LIVE_STATES = ["created", "queued", "processing"] as const satisfies readonly State[];

/** A percentile of a histogram given as bin -> count: the value of the bin the q-th count falls in. */
export function binPercentile(bins: ReadonlyMap<number, number>, q: number): number | null {
  let total = 0;
  for (const n of bins.values()) total += n;
  if (total <= 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const bin of [...bins.keys()].sort((a, b) => a - b)) {
    seen += bins.get(bin)!;
    if (seen >= rank) return binValue(bin);
  }
  return null;
}

/** A point of a chart's series: what the index's rollup and the received telemetry's query both give. */
export interface ActivityRow {
  /** The point's start, divided by its width. */
  point: number;
  metric: string;
  bin: number;
  n: number;
}

export type LiveStateCounts = Record<(typeof LIVE_STATES)[number], number>;
