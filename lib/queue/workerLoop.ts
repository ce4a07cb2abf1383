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

type Outcome = { ok: true; result: CompleteResult } | { ok: false; error: string; retryable: boolean };

/** What a handler's return or throw becomes (pure): a result to complete with, or an error and whether another attempt may fix it. */
export function outcomeOf(run: { result: CompleteResult | void } | { thrown: unknown }): Outcome {
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
  const { onError } = settings;
  const stats: WorkerStats = { completed: 0, failed: 0, dropped: 0 };
  const stopping = new AbortController();

  async function handle(request: RequestRecord, token: string): Promise<void> {
    const lost = new AbortController();
    const signal = AbortSignal.any([stopping.signal, lost.signal]);
    const beat = setInterval(() => {
      void (async () => {
        try {
          if (!(await queue.heartbeat(request.requestId, token))) lost.abort(new Error("the claim is no longer current"));
        } catch (error) {
          onError(error);
        }
      })();
    }, settings.heartbeatIntervalMs);
    try {
      let outcome: Outcome;
      try {
        const beatNow = () => queue.heartbeat(request.requestId, token);
        outcome = outcomeOf({ result: await settings.handler(request, { token, signal, heartbeat: beatNow }) });
      } catch (thrown) {
        outcome = outcomeOf({ thrown });
      }
      clearInterval(beat);
      if (outcome.ok) {
        const { fields, ...named } = outcome.result;
        await queue.recordResult(request.requestId, token, { outcome: "completed", fields: { ...fields, ...named } });
        const delivery = await queue.complete(request.requestId, token, outcome.result, settings.name);
        if (delivery.outcome === "dropped") stats.dropped++;
        else stats.completed++;
      } else {
        await queue.recordResult(request.requestId, token, { outcome: "failed", error: outcome.error, retryable: outcome.retryable });
        const delivery = await queue.fail(request.requestId, token, outcome.error, { retryable: outcome.retryable, by: settings.name });
        if (delivery.outcome === "dropped") stats.dropped++;
        else stats.failed++;
      }
    } catch (error) {
      // Reporting failed (a file became unreadable, the database went away): the recorded result stays for the monitor, and the loop goes on.
      onError(error);
    } finally {
      clearInterval(beat);
    }
  }

  async function slot(): Promise<void> {
    while (!stopping.signal.aborted) {
      let claim: Claim | null;
      try {
        claim = await queue.claimNext({ workspace: settings.workspace, worker: settings.name });
      } catch (error) {
        onError(error);
        claim = null;
      }
      if (!claim) {
        if (settings.stopWhenIdle) return;
        await sleep(settings.pollIntervalMs, undefined, { signal: stopping.signal }).catch(() => undefined);
        continue;
      }
      await handle(claim.request, claim.token);
    }
  }

  const signals: NodeJS.Signals[] = settings.handleSignals ? ["SIGINT", "SIGTERM"] : [];
  const onSignal = () => stopping.abort();
  for (const signal of signals) process.once(signal, onSignal);

  const done = Promise.all(Array.from({ length: settings.concurrency }, slot)).then(async () => {
    for (const signal of signals) process.removeListener(signal, onSignal);
    await settings.close();
    return stats;
  });

  return {
    stats,
    done,
    stop() {
      stopping.abort();
      return done;
    },
  };
}
