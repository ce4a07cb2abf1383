import type { RequestRecord, TransitionEntry } from "../model/requestFormat";
import { isTerminal, type State } from "../model/states";

export interface LifecycleSegment {
  state: State;
  from: number;
  /** Null while the request is still in this state. */
  to: number | null;
  ms: number;
}

type Step = Pick<TransitionEntry, "from" | "to" | "at">;

/**
 * The steps that changed the state (late deliveries and field-only writes changed nothing). A file
 * without a history (another program's, such as a gateway's own tracker) has its lifecycle times: the
 * steps are made from `createdAt`, `queuedAt`, `processingStartedAt` and `completedAt`.
 */
export function stateSteps(request: RequestRecord): Step[] {
  const history = (request.transitions ?? []).filter((entry) => !entry.dropped && entry.from !== entry.to);
  if (!history.length) return stepsFromTimes(request, request.state);
  const first = history[0]!;
  if (first.from === null) return history;
  // A history that starts mid-way (another program's file, adopted and then written by reqwatch):
  // the lifecycle times tell the steps before it, up to the state its first step left.
  const before = stepsFromTimes(request, first.from).filter((step) => step.at <= first.at);
  return before.at(-1)?.to === first.from ? [...before, ...history] : history;
}

/** The steps the lifecycle times tell, up to `state` (a terminal one at `completedAt`). */
function stepsFromTimes(request: RequestRecord, state: State): Step[] {
  const marks: [State, number | undefined][] = [
    ["created", request.createdAt],
    ["queued", request.queuedAt],
    ["processing", request.processingStartedAt],
  ];
  if (isTerminal(state)) marks.push([state, request.completedAt]);
  const upTo = marks.findIndex(([mark]) => mark === state);
  const steps: Step[] = [];
  let from: State | null = null;
  let last = -Infinity;
  for (const [mark, at] of upTo < 0 ? marks : marks.slice(0, upTo + 1)) {
    // A time out of order (or missing) says nothing reliable about that step.
    if (typeof at !== "number" || at < last) continue;
    steps.push({ from, to: mark, at });
    from = mark;
    last = at;
  }
  return steps;
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
