import type { TransitionEntry } from "./requestFormat";
import type { State } from "./states";

/**
 * How an attempt ended, by whom: the worker finished it (completed, failed: a failure it reported,
 * final or to be retried), the monitor did because the worker was gone, without a heartbeat or past a deadline
 * (released, timed out), or a person did (stopped: a cancel, or a retry of it).
 */
export type AttemptEnd = "completed" | "failed" | "released" | "timed out" | "stopped";

/** How the attempt a step out of `processing` ended. */
export function howEnded(entry: Pick<TransitionEntry, "to" | "by" | "manual">): AttemptEnd {
  if (entry.to === "completed") return "completed";
  if (entry.manual) return "stopped";
  // The monitor applying a dead worker's result marker reports that worker's failure.
  if (entry.by === "monitor") return entry.to === "queued" ? "released" : entry.to === "timeout" ? "timed out" : "failed";
  return entry.to === "timeout" ? "timed out" : "failed";
}

/** One run of a request: a step into processing, and the step that ended it (none while it runs). */
export interface Attempt {
  number: number;
  claimedAt: number;
  by: string | null;
  /** The claim's token: set when a reqwatch worker claimed it (another program's step into processing has none). */
  token: string | null;
  /** The worker process, as the claim step recorded it (claims written before it was recorded have none). */
  worker: { pid: number; host: string; processStartedAt: number | null } | null;
  ended: { at: number; state: State; how: AttemptEnd; reason: string | null; error: string | null } | null;
}

/** The attempts in a request's history, each with the step that ended it; dropped deliveries change nothing. */
export function attemptsOf(transitions: readonly TransitionEntry[]): Attempt[] {
  const attempts: Attempt[] = [];
  let open: Attempt | null = null;
  for (const entry of transitions) {
    if (entry.dropped || entry.from === entry.to) continue;
    // A failure recorded as the request's error (not on its step) moves to the step that leaves it (a retry): it is that attempt's.
    const ended = attempts.at(-1)?.ended;
    if (ended && !open && !ended.error && entry.error && entry.from === ended.state) ended.error = entry.error;
    if (entry.to === "processing") {
      const worker = entry.worker ? { pid: entry.worker.pid, host: entry.worker.host, processStartedAt: entry.worker.processStartedAt ?? null } : null;
      open = { number: attempts.length + 1, claimedAt: entry.at, by: entry.by ?? null, token: entry.token ?? null, worker, ended: null };
      attempts.push(open);
    } else if (open && entry.from === "processing") {
      open.ended = { at: entry.at, state: entry.to, how: howEnded(entry), reason: entry.reason ?? null, error: entry.error ?? null };
      open = null;
    }
  }
  return attempts;
}
