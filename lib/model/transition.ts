import { isDeepStrictEqual } from "node:util";
import { ReqwatchError } from "./errors";
import { MANAGED_KEYS, type RequestFields, type RequestRecord, type TransitionEntry } from "./requestFormat";
import { canTransition, isTerminal, type State } from "./states";

/** What a writer asks for: a new state, new field values, or both, with an optional reason. */
export interface Change {
  to?: State;
  fields?: RequestFields;
  reason?: string;
  by?: string;
}

/** What the tracker's own operations (claims, deliveries, the monitor) may do besides a Change. */
export interface InternalChange extends Change {
  /** Fields the tracker manages, set after the state change. */
  managed?: Partial<Pick<RequestRecord, "claim" | "notBefore">>;
  /** Extra facts for the history entry. */
  note?: Pick<TransitionEntry, "token" | "dropped" | "manual" | "error" | "worker">;
}

export interface NewRequestInput extends RequestFields {
  requestId: string;
  workspace: string;
  /** Start in a later state; the history still records `created` first. */
  state?: "created" | "queued" | "processing";
  reason?: string;
  by?: string;
}

const managed = new Set<string>(MANAGED_KEYS);

function assertSettable(fields: RequestFields | undefined): void {
  for (const key of Object.keys(fields ?? {})) {
    if (managed.has(key)) {
      throw new ReqwatchError("BAD_INPUT", `Field '${key}' is managed by the tracker and cannot be set directly.`);
    }
  }
}

/**
 * Apply one change to a request and return the new request. Pure: no I/O, no clock (the caller
 * passes `now`). The one place that enforces the transition table, bumps `version` and appends
 * to `transitions`; every writer goes through it.
 */
export function applyChange(current: RequestRecord, change: InternalChange, now: number): RequestRecord {
  assertSettable(change.fields);
  const from = current.state;
  const to = change.to;
  if (to !== undefined && !canTransition(from, to)) {
    throw new ReqwatchError("INVALID_TRANSITION", `Request ${current.requestId} cannot move from '${from}' to '${to}'.`, {
      requestId: current.requestId,
      from,
      to,
    });
  }

  const next: RequestRecord = { ...current, ...change.fields };
  const changedFields = Object.keys(change.fields ?? {});
  if (to !== undefined) enterState(next, from, to, now);
  Object.assign(next, change.managed);

  next.version = (current.version ?? 0) + 1;
  next.lastUpdatedAt = now;
  const entry: TransitionEntry = { from, to: to ?? from, at: now };
  if (change.reason) entry.reason = change.reason;
  if (change.by) entry.by = change.by;
  if (changedFields.length) entry.fields = changedFields;
  // A new attempt, or success, leaves an earlier attempt's error to that attempt's step in the history.
  if ((to === "queued" || to === "completed") && next.error !== undefined && !changedFields.includes("error")) {
    // Kept once: a file written before errors moved to the history still carries it.
    if (!current.transitions?.some((step) => step.error === next.error)) entry.error = next.error;
    delete next.error;
  }
  Object.assign(entry, change.note);
  next.transitions = [...(current.transitions ?? []), entry];
  return next;
}

/**
 * A writer's change that moves no state and sets each field to the value it already has: nothing to
 * record, so no new version is written (a hook that sends the same fields again costs nothing).
 */
export function changesNothing(current: RequestRecord, change: Change): boolean {
  if (change.to !== undefined) return false;
  const fields = (change.fields ?? {}) as Record<string, unknown>;
  const now = current as unknown as Record<string, unknown>;
  return Object.entries(fields).every(([key, value]) => isDeepStrictEqual(now[key], value));
}

function enterState(next: RequestRecord, from: State, to: State, now: number): void {
  next.state = to;
  next.previousState = from;
  // A claim lives exactly as long as the request is processing; so does a back-off while queued.
  if (from === "processing") next.claim = null;
  delete next.notBefore;
  if (to === "queued") {
    next.queuedAt = now;
    // A retry starts a fresh attempt: the old outcome stays in the history, not in the fields.
    if (isTerminal(from)) {
      delete next.completedAt;
      next.timedOut = false;
    }
  } else if (to === "processing") {
    next.processingStartedAt = now;
    next.attempt = (next.attempt ?? 0) + 1;
  } else if (isTerminal(to)) {
    next.completedAt = now;
    if (to === "timeout") next.timedOut = true;
  }
}

/** A new request in `created` (or carried on to `queued`/`processing` in the same write). */
export function newRequest(input: NewRequestInput, now: number): RequestRecord {
  const { requestId, workspace, state, reason, by, ...fields } = input;
  assertSettable(fields);
  const created: RequestRecord = {
    ...fields,
    requestId,
    workspace,
    state: "created",
    createdAt: now,
    lastUpdatedAt: now,
    timedOut: fields.timedOut ?? false,
    version: 1,
    transitions: [{ from: null, to: "created", at: now, ...(reason ? { reason } : {}), ...(by ? { by } : {}) }],
  };
  if (!state || state === "created") return created;
  const carried = applyChange(created, { to: state, reason, by }, now);
  carried.version = 1;
  return carried;
}

/** When the request entered its current state: the last state change in its history, else the lifecycle times. */
export function stateEnteredAt(request: RequestRecord): number {
  const history = request.transitions ?? [];
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i]!;
    if (entry.to === request.state && entry.from !== entry.to) return entry.at;
  }
  const byState: Partial<Record<State, number | undefined>> = {
    created: request.createdAt,
    queued: request.queuedAt,
    processing: request.processingStartedAt,
    completed: request.completedAt,
    failed: request.completedAt,
    timeout: request.completedAt,
  };
  return byState[request.state] ?? request.lastUpdatedAt;
}
