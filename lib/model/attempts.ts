import type { TransitionEntry } from "./requestFormat";
import type { State } from "./states";

/** One run of a request: a step into processing, and the step that ended it (none while it runs). */
export interface Attempt {
  number: number;
  claimedAt: number;
  by: string | null;
  /** The claim's token: set when a reqwatch worker claimed it (another program's step into processing has none). */
  token: string | null;
  /** The worker process, as the claim step recorded it (claims written before it was recorded have none). */
  worker: { pid: number; host: string; processStartedAt: number | null } | null;
  ended: { at: number; state: State; reason: string | null; error: string | null } | null;
}

/** The attempts in a request's history, each with the step that ended it; dropped deliveries change nothing. */
export function attemptsOf(transitions: readonly TransitionEntry[]): Attempt[] {
  const attempts: Attempt[] = [];
  let open: Attempt | null = null;
  for (const entry of transitions) {
    if (entry.dropped || entry.from === entry.to) continue;
    if (entry.to === "processing") {
      const worker = entry.worker ? { pid: entry.worker.pid, host: entry.worker.host, processStartedAt: entry.worker.processStartedAt ?? null } : null;
      open = { number: attempts.length + 1, claimedAt: entry.at, by: entry.by ?? null, token: entry.token ?? null, worker, ended: null };
      attempts.push(open);
    } else if (open && entry.from === "processing") {
      open.ended = { at: entry.at, state: entry.to, reason: entry.reason ?? null, error: entry.error ?? null };
      open = null;
    }
  }
  return attempts;
}
