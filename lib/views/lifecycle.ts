import type { RequestRecord } from "../model/requestFormat";
import { isTerminal, type State } from "../model/states";
import { stateSteps } from "../model/stateSteps";

interface LifecycleSegment {
  state: State;
  from: number;
  /** Null while the request is still in this state. */
  to: number | null;
  ms: number;
}

/**
 * The time spent in each state, in order: the lifecycle bar. A terminal state ends the bar; a
 * live one runs until `now`. A file without a history (another tool's) is one segment.
 */
export function lifecycleSegments(request: RequestRecord, now: number): LifecycleSegment[] {
  const steps = stateSteps(request);
  const segments: LifecycleSegment[] = [];
  let state: State = steps[0]?.from ?? steps[0]?.to ?? request.state;
  let since = steps[0]?.from === null ? (steps[0]?.at ?? request.createdAt) : request.createdAt;
  for (const step of steps) {
    if (step.from === null) {
      state = step.to;
      since = step.at;
      continue;
    }
    segments.push({ state, from: since, to: step.at, ms: Math.max(0, step.at - since) });
    state = step.to;
    since = step.at;
  }
  if (!steps.length) state = request.state;
  const end = isTerminal(state) ? since : Math.max(since, now);
  segments.push({ state, from: since, to: isTerminal(state) ? since : null, ms: end - since });
  return segments;
}

/** Total time per state over the whole lifecycle (a retried request is queued and processing more than once). */
export function timeInStates(segments: LifecycleSegment[]): Partial<Record<State, number>> {
  const totals: Partial<Record<State, number>> = {};
  for (const segment of segments) totals[segment.state] = (totals[segment.state] ?? 0) + segment.ms;
  return totals;
}
