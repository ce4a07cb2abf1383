import { setTimeout as sleep } from "node:timers/promises";
import type { Claim, ClaimOptions, CompleteResult, Delivery, FailOptions, RequestFields, WorkerHandle, WorkerStats } from "../types";
import type { RequestRecord } from "../model/requestFormat";

/** A value now (the local tracker) or later (the shared store's): the loop awaits either. */
type Maybe<T> = T | Promise<T>;

/**
 * The queue calls a worker makes, as both trackers give them: the local tracker answers at once,
 * the shared store with promises. `Beat` is what a heartbeat returns, and what a handler's gets.
 */
export interface WorkerQueue<Beat extends Maybe<boolean>> {
  claimNext(options: ClaimOptions): Maybe<Claim | null>;
  heartbeat(requestId: string, token: string): Beat;
  recordResult(
    requestId: string,
    token: string,
    result: { outcome: "completed"; fields?: RequestFields } | { outcome: "failed"; error: string; retryable?: boolean },
  ): Maybe<void>;
  complete(requestId: string, token: string, result: CompleteResult, by?: string): Maybe<Delivery>;
  fail(requestId: string, token: string, error: string, options: FailOptions): Maybe<Delivery>;
}

export interface LoopContext<Beat> {
  token: string;
  signal: AbortSignal;
  heartbeat(): Beat;
}

/** The loop's settings, resolved by the runner that opened its queue. */
export interface LoopSettings<Beat> {
  handler: (request: RequestRecord, context: LoopContext<Beat>) => Maybe<CompleteResult | void>;
  concurrency: number;
  workspace?: string;
  name?: string;
  pollIntervalMs: number;
  heartbeatIntervalMs: number;
  handleSignals: boolean;
  stopWhenIdle: boolean;
  onError: (error: unknown) => void;
  /** Called once the slots have stopped: closes a tracker the runner opened. */
  close: () => Maybe<void>;
}

/** What a runner is given (`runWorker`, `runSharedWorker`): the loop's settings, most of them optional. */
interface WorkerOptions<Beat> {
  handler: LoopSettings<Beat>["handler"];
  concurrency?: number;
  workspace?: string;
  name?: string;
  pollIntervalMs?: number;
  heartbeatIntervalMs?: number;
  handleSignals?: boolean;
  stopWhenIdle?: boolean;
  onError?: (error: unknown) => void;
}

/** The loop's settings with the defaults both stores use: a heartbeat a third of the timeout apart, a poll every 200 ms, one slot. */
export function loopSettings<Beat>(options: WorkerOptions<Beat>, heartbeatTimeoutMs: number, close: () => Maybe<void>): LoopSettings<Beat> {
  return {
    handler: options.handler,
    concurrency: options.concurrency ?? 1,
    workspace: options.workspace,
    name: options.name,
    pollIntervalMs: options.pollIntervalMs ?? 200,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? Math.max(100, Math.floor(heartbeatTimeoutMs / 3)),
    handleSignals: options.handleSignals !== false,
    stopWhenIdle: options.stopWhenIdle === true,
    onError: options.onError ?? ((error: unknown) => console.error("reqwatch worker:", error)),
    close,
  };
}

type Outcome = { ok: true; result: CompleteResult } | { ok: false; error: string; retryable: boolean };

/** What a handler's return or throw becomes (pure): a result to complete with, or an error and whether another attempt may fix it. */
function outcomeOf(run: { result: CompleteResult | void } | { thrown: unknown }): Outcome {
  if ("result" in run) return { ok: true, result: run.result ?? {} };
  const error = run.thrown;
  return { ok: false, error: error instanceof Error ? error.message : String(error), retryable: (error as { retryable?: boolean })?.retryable !== false };
}

/**
 * Claim, heartbeat, record the result, then complete or fail, `concurrency` at a time, on either
 * tracker. A handler that throws fails its request (retryably, unless the error says otherwise) and
 * the worker goes on: one bad request never stops the loop. A refused heartbeat (the claim was taken
 * back) aborts the handler's signal, and its late result is dropped by the fence.
 */
export function runWorkerLoop<Beat extends Maybe<boolean>>(queue: WorkerQueue<Beat>, settings: LoopSettings<Beat>): WorkerHandle {
  const loop = new WorkerLoop(queue, settings);
  // A plain object: a caller may take `stop` off it.
  return { stats: loop.stats, done: loop.done, stop: () => loop.stop() };
}

/** The slots of one worker, the queue they claim from, and what they have delivered. */
class WorkerLoop<Beat extends Maybe<boolean>> {
  readonly stats: WorkerStats = { completed: 0, failed: 0, dropped: 0 };
  readonly done: Promise<WorkerStats>;

  readonly #queue: WorkerQueue<Beat>;
  readonly #settings: LoopSettings<Beat>;
  readonly #stopping = new AbortController();

  constructor(queue: WorkerQueue<Beat>, settings: LoopSettings<Beat>) {
    this.#queue = queue;
    this.#settings = settings;
    const signals: NodeJS.Signals[] = settings.handleSignals ? ["SIGINT", "SIGTERM"] : [];
    const onSignal = () => this.#stopping.abort();
    for (const signal of signals) process.once(signal, onSignal);
    this.done = Promise.all(Array.from({ length: settings.concurrency }, () => this.#slot())).then(async () => {
      for (const signal of signals) process.removeListener(signal, onSignal);
      await settings.close();
      return this.stats;
    });
  }

  stop(): Promise<WorkerStats> {
    this.#stopping.abort();
    return this.done;
  }

  async #slot(): Promise<void> {
    const settings = this.#settings;
    const stopping = this.#stopping.signal;
    while (!stopping.aborted) {
      let claim: Claim | null;
      try {
        claim = await this.#queue.claimNext({ workspace: settings.workspace, worker: settings.name });
      } catch (error) {
        settings.onError(error);
        claim = null;
      }
      if (!claim) {
        if (settings.stopWhenIdle) return;
        await sleep(settings.pollIntervalMs, undefined, { signal: stopping }).catch(() => undefined);
        continue;
      }
      await this.#handle(claim.request, claim.token);
    }
  }

  async #handle(request: RequestRecord, token: string): Promise<void> {
    const queue = this.#queue;
    const { onError } = this.#settings;
    const lost = new AbortController();
    const signal = AbortSignal.any([this.#stopping.signal, lost.signal]);
    const beat = setInterval(() => {
      void (async () => {
        try {
          if (!(await queue.heartbeat(request.requestId, token))) lost.abort(new Error("the claim is no longer current"));
        } catch (error) {
          onError(error);
        }
      })();
    }, this.#settings.heartbeatIntervalMs);
    try {
      let outcome: Outcome;
      try {
        const beatNow = () => queue.heartbeat(request.requestId, token);
        outcome = outcomeOf({ result: await this.#settings.handler(request, { token, signal, heartbeat: beatNow }) });
      } catch (thrown) {
        outcome = outcomeOf({ thrown });
      }
      clearInterval(beat);
      await this.#deliver(request.requestId, token, outcome);
    } catch (error) {
      // Reporting failed (a file became unreadable, the database went away): the recorded result stays for the monitor, and the loop goes on.
      onError(error);
    } finally {
      clearInterval(beat);
    }
  }

  /** The result recorded first, then the delivery: a crash between them loses nothing. */
  async #deliver(requestId: string, token: string, outcome: Outcome): Promise<void> {
    const queue = this.#queue;
    const by = this.#settings.name;
    if (outcome.ok) {
      const { fields, ...named } = outcome.result;
      await queue.recordResult(requestId, token, { outcome: "completed", fields: { ...fields, ...named } });
      const delivery = await queue.complete(requestId, token, outcome.result, by);
      if (delivery.outcome === "dropped") this.stats.dropped++;
      else this.stats.completed++;
    } else {
      await queue.recordResult(requestId, token, { outcome: "failed", error: outcome.error, retryable: outcome.retryable });
      const delivery = await queue.fail(requestId, token, outcome.error, { retryable: outcome.retryable, by });
      if (delivery.outcome === "dropped") this.stats.dropped++;
      else this.stats.failed++;
    }
  }
}
