import { randomUUID } from "./process/crypto";
import type {
  CommandInput,
  CreateInput,
  FileInput,
  MonitorPass,
  Ownership,
  ResolvedTrackerOptions,
  SessionResult,
  SessionTracker,
  SnapshotInput,
  StartOutcome,
  Tracker,
} from "./types";
import type { SessionRecord } from "./stateFiles/sessionFile";
import { blankSession } from "./sessions/sessionTracker";
import { activeTraceparent } from "./process/activeTrace";
import { DISABLED_ENV } from "./store/options";
import { ReqwatchError, TimeoutError } from "./model/errors";
import type { RequestRecord } from "./model/requestFormat";
import { isTerminal } from "./model/states";
import { redactField } from "./model/redaction";
import { applyChange, newRequest, type Change } from "./model/transition";

/** Requests a disabled tracker keeps in memory (so `get` after `create` works), the oldest forgotten first. */
export const DISABLED_HELD = 1000;

/** Why tracking is off, and how to turn it back on: the one line said once per process. */
function offNotice(byOption: boolean, env: NodeJS.ProcessEnv): string {
  return byOption
    ? "reqwatch: tracking is off (the option enabled: false): nothing is recorded. Open the tracker without it to turn tracking back on."
    : `reqwatch: tracking is off (${DISABLED_ENV}=${env[DISABLED_ENV] ?? ""}): nothing is recorded. Unset ${DISABLED_ENV} to turn tracking back on.`;
}

let told = false;

/** Say on stderr, once per process, that tracking is off: a gateway's log shows why its folder stays empty. */
export function noteTrackingOff(byOption = false, env: NodeJS.ProcessEnv = process.env): void {
  if (told) return;
  told = true;
  process.stderr.write(`${offNotice(byOption, env)}\n`);
}

/** What reqwatch's own programs are told when they open the folder with tracking off: nothing was done, and why. */
export function trackingOffError(what: string): ReqwatchError {
  return new ReqwatchError("READ_ONLY", `${what} is not possible: tracking is off (${DISABLED_ENV} or enabled: false); nothing is recorded.`);
}

/** A request this process does not hold (another process created it, or it was forgotten): its id and nothing else known. */
const standIn = (requestId: string, at: number): RequestRecord => newRequest({ requestId, workspace: "" }, at);

interface Waiter {
  settle: (request: RequestRecord) => void;
  fail: (error: Error) => void;
}

/** The requests a disabled tracker keeps in memory for this process, and the waits on them. */
class HeldRequests {
  readonly #now: () => number;
  readonly #held = new Map<string, RequestRecord>();
  readonly #waiting = new Map<string, Set<Waiter>>();

  constructor(now: () => number) {
    this.#now = now;
  }

  get(requestId: string): RequestRecord | null {
    return this.#held.get(requestId) ?? null;
  }

  create(input: CreateInput): RequestRecord {
    const { requestId = randomUUID(), workspace, state, reason, by, ...fields } = input;
    const traceparent = fields.traceparent ?? activeTraceparent() ?? undefined;
    try {
      return this.#keep(newRequest({ ...fields, ...(traceparent !== undefined && { traceparent }), requestId, workspace, state, reason, by }, this.#now()));
    } catch {
      // Fields the real tracker would refuse: the request is still made, without them.
      return this.#keep(newRequest({ requestId, workspace, state }, this.#now()));
    }
  }

  /**
   * The change as the real tracker would apply it; one it would refuse (a transition the table does
   * not allow, a managed field) still moves the request to the state asked for: the caller goes on.
   */
  change(requestId: string, next: Change | ((current: RequestRecord) => Change)): RequestRecord {
    const current = this.#held.get(requestId) ?? standIn(requestId, this.#now());
    const at = this.#now();
    let asked: Change = {};
    try {
      asked = typeof next === "function" ? next(current) : next;
      return this.#keep(applyChange(current, asked, at));
    } catch {
      const { to, ...fields } = asked;
      let next: RequestRecord = { ...current, lastUpdatedAt: at, version: (current.version ?? 0) + 1 };
      try {
        next = applyChange(current, fields, at);
      } catch {
        // A managed field: the change is kept without its fields.
      }
      return this.#keep(to ? { ...next, state: to, previousState: current.state } : next);
    }
  }

  wait(requestId: string, timeoutMs: number): Promise<RequestRecord> {
    const current = this.#held.get(requestId);
    if (current && isTerminal(current.state)) return Promise.resolve(current);
    // Only this process's own changes can finish it: nothing else is recorded.
    return new Promise((resolve, reject) => {
      const waiters = this.#waiting.get(requestId) ?? new Set();
      this.#waiting.set(requestId, waiters);
      const end = () => {
        clearTimeout(timer);
        waiters.delete(waiter);
        if (!waiters.size) this.#waiting.delete(requestId);
      };
      const waiter: Waiter = {
        settle: (request) => (end(), resolve(request)),
        fail: (error) => (end(), reject(error)),
      };
      const timer = setTimeout(
        () =>
          waiter.fail(
            new TimeoutError(`Request ${requestId} did not finish within ${timeoutMs} ms (tracking is off: only this process's changes count).`, {
              requestId,
            }),
          ),
        timeoutMs,
      );
      waiters.add(waiter);
    });
  }

  close(): void {
    for (const [requestId, waiters] of this.#waiting)
      for (const waiter of waiters) waiter.fail(new TimeoutError(`The tracker closed while waiting for request ${requestId}.`, { requestId }));
    this.#held.clear();
  }

  #keep(request: RequestRecord): RequestRecord {
    const held = this.#held;
    held.delete(request.requestId);
    held.set(request.requestId, request);
    if (held.size > DISABLED_HELD) held.delete(held.keys().next().value!);
    if (isTerminal(request.state)) for (const waiter of this.#waiting.get(request.requestId) ?? []) waiter.settle(request);
    return request;
  }
}

/** The one session a disabled tracker keeps, recorded nowhere: a hook that prints its id goes on. */
class HeldSession implements SessionTracker {
  readonly #options: ResolvedTrackerOptions;
  #session: SessionRecord | null = null;

  constructor(options: ResolvedTrackerOptions) {
    this.#options = options;
  }

  current(): string | null {
    return this.#session?.session_id ?? null;
  }

  start(): SessionResult<StartOutcome> {
    const started = this.#session === null;
    const session = (this.#session ??= blankSession(randomUUID(), this.#options.now()));
    return { ok: true, value: { session, started, reason: started ? "none" : "continued" } };
  }

  // Recorded nowhere: the session comes back as it was.
  recordCommand(_input: CommandInput, sessionId?: string): SessionResult {
    return { ok: true, value: this.#sessionFor(sessionId) };
  }

  recordFile(_input: FileInput, sessionId?: string): SessionResult {
    return { ok: true, value: this.#sessionFor(sessionId) };
  }

  /** Shown as a hook's output: redacted as a recording tracker would. */
  recordedPath(path: string): string {
    return redactField(this.#options.redaction, "fileSummary", path);
  }

  updateSnapshot(_input: SnapshotInput, sessionId?: string): SessionResult {
    return { ok: true, value: this.#sessionFor(sessionId) };
  }

  reset(): SessionResult<{ ended: string | null; session: SessionRecord }> {
    const ended = this.#session?.session_id ?? null;
    const session = (this.#session = blankSession(randomUUID(), this.#options.now()));
    return { ok: true, value: { ended, session } };
  }

  get(sessionId: string): SessionRecord | null {
    return this.#session?.session_id === sessionId ? this.#session : null;
  }

  #sessionFor(sessionId: string | undefined): SessionRecord {
    if (sessionId !== undefined && this.#session?.session_id !== sessionId) return blankSession(sessionId, this.#options.now());
    return (this.#session ??= blankSession(randomUUID(), this.#options.now()));
  }
}

const emptyPass = (at: number): MonitorPass => ({
  at,
  durationMs: 0,
  counts: { stuckQueued: 0, stuckNotOwned: 0, deadlineTimedOut: 0, resultsApplied: 0, stuckAlive: 0, released: 0, timedOut: 0 },
  stuck: [],
});

/**
 * The tracker `openTracker` returns when tracking is off: it creates, changes and removes no file
 * or folder, and its hot path (create, transition, update, the queue's deliveries, session
 * recording) never throws: a gateway rolled back this way runs as if reqwatch were not there.
 * Requests live in a small map for this process only; `list` is empty. It has the library's calls
 * alone: reqwatch's own programs, which read and act on the folder, check that tracking is on first.
 */
export function openDisabledTracker(options: ResolvedTrackerOptions, byOption: boolean): Tracker {
  noteTrackingOff(byOption);
  const requests = new HeldRequests(options.now);
  const ownership: Ownership = {
    access: "observed",
    reason: `tracking is off (${DISABLED_ENV} or enabled: false)`,
    toWrite: `unset ${DISABLED_ENV} (or drop enabled: false)`,
  };

  return {
    ownership,
    options,
    openReport: null,
    sessions: new HeldSession(options),

    create: (input) => requests.create(input),
    transition: (requestId, to, extra = {}) => requests.change(requestId, { ...extra, to }),
    update: (requestId, next) => requests.change(requestId, next),
    get: (requestId) => requests.get(requestId),
    list: () => ({ items: [], nextCursor: null }),

    // Nothing is ever queued for this tracker: a worker loop finds no work and idles.
    claimNext: () => null,
    // True: a worker that claimed elsewhere keeps going; nothing here can have taken its claim.
    heartbeat: () => true,
    recordResult: () => {},
    complete: (requestId, _token, result = {}, by) => {
      const { fields, ...named } = result;
      return { outcome: "applied", request: requests.change(requestId, { to: "completed", fields: { ...fields, ...named }, ...(by !== undefined && { by }) }) };
    },
    fail: (requestId, _token, error, failOptions = {}) => ({
      outcome: "applied",
      request: requests.change(requestId, { to: "failed", fields: { error }, ...(failOptions.by !== undefined && { by: failOptions.by }) }),
    }),
    startMonitor: () => ({ lastPass: () => null, lastError: () => null, passNow: () => emptyPass(options.now()), retention: null, stop: () => {} }),
    // No index to build: nothing is recorded.
    rebuildIndex: () => Promise.resolve(null),
    indexing: () => null,
    waitForResult: (requestId, { timeoutMs }) => requests.wait(requestId, timeoutMs),
    close: () => requests.close(),
  };
}
