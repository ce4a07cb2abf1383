import { quantileSorted } from "simple-statistics";
import type { RecoveryReport } from "../types";
import type { RetentionStatus } from "../actions/retention";
import type { RequestRecord } from "../model/requestFormat";
import { TERMINAL_STATES, type State } from "../model/states";
import type { Reader } from "../roles/reader";
import { stateSteps } from "../model/stateSteps";

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  n: number;
}

interface OverviewMetrics {
  windowMs: number;
  /** The span the figures cover: the window, or less when the oldest request is younger than it. */
  spanMs: number;
  /** Requests that reached a terminal state in the window, per state. */
  finished: Partial<Record<State, number>>;
  /** Per minute over the span covered. */
  perMinute: number;
  /** Queue wait (queued until claimed) and processing time (claimed until finished), over the window's finished requests. */
  queueWait: Percentiles | null;
  processing: Percentiles | null;
  /** When more requests finished than were measured, the newest `sampled` were. */
  sampled: number;
}

interface RecentFailure {
  requestId: string;
  state: State;
  at: number;
  error: string | null;
}

export interface RecoveryNotice {
  /** Requests under a reqwatch claim whose worker was gone when this server started, that its monitor released or timed out. */
  total: number;
  outcomes: Partial<Record<State, string[]>>;
}

const WINDOW_MS = 60 * 60 * 1000;
/** Newest finished requests measured for the percentiles: the overview's cost stays the same at any size. */
const MAX_SAMPLED = 2000;

function percentiles(values: number[]): Percentiles | null {
  if (!values.length) return null;
  const sorted = values.sort((a, b) => a - b);
  return { p50: quantileSorted(sorted, 0.5), p95: quantileSorted(sorted, 0.95), p99: quantileSorted(sorted, 0.99), n: sorted.length };
}

/** Queue wait and processing time of the last attempt, from the history or the lifecycle times (null where a step is missing). */
function timings(request: RequestRecord): { wait: number | null; work: number | null } {
  const steps = stateSteps(request);
  const claimIndex = steps.findLastIndex((s) => s.to === "processing");
  if (claimIndex < 0) return { wait: null, work: null };
  const claim = steps[claimIndex]!;
  const queued = steps.slice(0, claimIndex).findLast((s) => s.to === "queued");
  const done = steps.slice(claimIndex + 1).find((s) => s.from === "processing");
  return { wait: queued ? claim.at - queued.at : null, work: done ? done.at - claim.at : null };
}

/** Throughput and latency over the last hour, from the index and the newest finished requests' histories. */
export function overviewMetrics(reader: Reader, now: number): OverviewMetrics {
  const finished: Partial<Record<State, number>> = {};
  const wait: number[] = [];
  const work: number[] = [];
  let total = 0;
  let sampled = 0;
  let cursor: string | undefined;
  do {
    const page = reader.list({ states: [...TERMINAL_STATES], updatedFrom: now - WINDOW_MS, limit: 500, cursor });
    for (const row of page.items) {
      finished[row.state] = (finished[row.state] ?? 0) + 1;
      total++;
      if (sampled >= MAX_SAMPLED) continue;
      const request = reader.get(row.requestId);
      if (!request) continue;
      sampled++;
      const t = timings(request);
      if (t.wait !== null) wait.push(t.wait);
      if (t.work !== null) work.push(t.work);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  // Rates over the time actually covered: a folder whose first request is a minute old has a minute of data.
  const oldest = reader.oldestCreatedAt();
  const spanMs = Math.max(1000, Math.min(WINDOW_MS, oldest === null ? WINDOW_MS : now - oldest));
  return { windowMs: WINDOW_MS, spanMs, finished, perMinute: total / (spanMs / 60_000), queueWait: percentiles(wait), processing: percentiles(work), sampled };
}

/** The overview's figures that follow every change: the last hour, the newest failures, what the retention did. */
export interface OverviewView {
  metrics: OverviewMetrics;
  failures: RecentFailure[];
  retention: RetentionStatus;
}

export function overviewView(reader: Reader, now = reader.options.now()): OverviewView {
  return { metrics: overviewMetrics(reader, now), failures: recentFailures(reader), retention: reader.retention() };
}

/** The newest failed and timed-out requests, with their errors. */
function recentFailures(reader: Reader, limit = 5): RecentFailure[] {
  return reader.list({ states: ["failed", "timeout"], limit }).items.map((row) => ({
    requestId: row.requestId,
    state: row.state,
    at: row.lastUpdatedAt,
    error: reader.get(row.requestId)?.error ?? null,
  }));
}

/**
 * What the server's start did to requests left processing: those recovery timed out (when the
 * tracker was opened with recovery), and those the first monitor pass released or timed out (a
 * reqwatch worker gone). `processingAfterOpen` is the processing ids before that first pass.
 */
export function recoveryNotice(reader: Reader, report: RecoveryReport | null, processingAfterOpen: readonly string[]): RecoveryNotice | null {
  const outcomes: Partial<Record<State, string[]>> = {};
  const add = (state: State, id: string) => (outcomes[state] ??= []).push(id);
  for (const id of report?.timedOut ?? []) add("timeout", id);
  for (const id of processingAfterOpen) {
    // Called right after the first pass: a monitor step now is that pass's.
    const request = reader.get(id);
    const last = request?.transitions?.at(-1);
    if (request && request.state !== "processing" && last?.by === "monitor") add(request.state, id);
  }
  const total = Object.values(outcomes).reduce((sum, ids) => sum + ids.length, 0);
  return total ? { total, outcomes } : null;
}
