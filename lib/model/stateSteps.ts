import type { RequestRecord, TransitionEntry } from "./requestFormat";
import { isTerminal, type State } from "./states";

/** A step that changed the state; one from the history carries who made it. */
type Step = Pick<TransitionEntry, "from" | "to" | "at"> & Partial<Pick<TransitionEntry, "by" | "manual">>;

/**
 * The steps that changed the state (late deliveries and field-only writes changed nothing). A file
 * without a history (another program's, such as a gateway's own tracker) has its lifecycle times: the
 * steps are made from `createdAt`, `queuedAt`, `processingStartedAt` and `completedAt`.
 */
export function stateSteps(request: RequestRecord): Step[] {
  const history = (request.transitions ?? []).filter((entry) => !entry.dropped && entry.from !== entry.to);
  if (!history.length) return endingInItsState(stepsFromTimes(request, request.state), request);
  const first = history[0]!;
  if (first.from === null) return history;
  // A history that starts mid-way (another program's file, adopted and then written by reqwatch):
  // the lifecycle times tell the steps before it, up to the state its first step left.
  const before = stepsFromTimes(request, first.from).filter((step) => step.at <= first.at);
  return before.at(-1)?.to === first.from ? [...before, ...history] : history;
}

/**
 * Steps that end in the request's state. When its lifecycle times do not say when it entered it (a
 * queued file with no `queuedAt`), the step is at its last update, the latest it can have been:
 * without it, counts of requests by state over time would hold it in that state from before it existed.
 */
function endingInItsState(steps: Step[], request: RequestRecord): Step[] {
  const last = steps.at(-1);
  if (last?.to === request.state) return steps;
  const at = Math.max(last?.at ?? -Infinity, typeof request.lastUpdatedAt === "number" ? request.lastUpdatedAt : -Infinity);
  return Number.isFinite(at) ? [...steps, { from: last?.to ?? null, to: request.state, at }] : steps;
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
