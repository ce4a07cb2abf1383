import { setTimeout as sleep } from "node:timers/promises";
import type { CompleteResult, RunWorkerOptions, WorkerHandle, WorkerStats } from "../types";
import type { RequestRecord } from "../model/requestFormat";
import { openTracker } from "../tracker";

/** Throw this (or any error with `retryable: false`) for a failure another attempt cannot fix. */
export class PermanentError extends Error {
  readonly retryable = false;
}

/**
 * Claim, heartbeat, record the result marker, then complete or fail, `concurrency` at a time. A
 * handler that throws fails its request (retryably, unless the error says otherwise) and the worker
 * goes on: one bad request never stops the loop.
 */
export function runWorker(options: RunWorkerOptions): WorkerHandle {
  const tracker = options.tracker ?? openTracker({ stateDir: options.stateDir, recover: false });
  const owned = !options.tracker;
  const concurrency = options.concurrency ?? 1;
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? Math.max(100, Math.floor(tracker.options.heartbeatTimeoutMs / 3));
  const onError = options.onError ?? ((error: unknown) => console.error("reqwatch worker:", error));
  const stats: WorkerStats = { completed: 0, failed: 0, dropped: 0 };
  const stopping = new AbortController();

  async function handle(request: RequestRecord, token: string): Promise<void> {
    const lost = new AbortController();
    const signal = AbortSignal.any([stopping.signal, lost.signal]);
    const beat = setInterval(() => {
      try {
        if (!tracker.heartbeat(request.requestId, token)) lost.abort(new Error("the claim is no longer current"));
      } catch (error) {
        onError(error);
      }
    }, heartbeatIntervalMs);
    try {
      let outcome: { ok: true; result: CompleteResult } | { ok: false; error: string; retryable: boolean };
      try {
        const beatNow = () => tracker.heartbeat(request.requestId, token);
        outcome = { ok: true, result: (await options.handler(request, { token, signal, heartbeat: beatNow })) ?? {} };
      } catch (error) {
        outcome = {
          ok: false,
          error: error instanceof Error ? error.message : String(error),
          retryable: (error as { retryable?: boolean })?.retryable !== false,
        };
      }
      clearInterval(beat);
      if (outcome.ok) {
        const { fields, ...named } = outcome.result;
        tracker.recordResult(request.requestId, token, { outcome: "completed", fields: { ...fields, ...named } });
        const delivery = tracker.complete(request.requestId, token, outcome.result, options.name);
        if (delivery.outcome === "dropped") stats.dropped++;
        else stats.completed++;
      } else {
        tracker.recordResult(request.requestId, token, { outcome: "failed", error: outcome.error, retryable: outcome.retryable });
        const delivery = tracker.fail(request.requestId, token, outcome.error, { retryable: outcome.retryable, by: options.name });
        if (delivery.outcome === "dropped") stats.dropped++;
        else stats.failed++;
      }
    } catch (error) {
      // Reporting failed (say the file became unreadable): the marker stays for the monitor, and the loop goes on.
      onError(error);
    } finally {
      clearInterval(beat);
    }
  }

  async function slot(): Promise<void> {
    while (!stopping.signal.aborted) {
      let claim;
      try {
        claim = tracker.claimNext({ workspace: options.workspace, worker: options.name });
      } catch (error) {
        onError(error);
        claim = null;
      }
      if (!claim) {
        if (options.stopWhenIdle) return;
        await sleep(pollIntervalMs, undefined, { signal: stopping.signal }).catch(() => undefined);
        continue;
      }
      await handle(claim.request, claim.token);
    }
  }

  const signals: NodeJS.Signals[] = options.handleSignals === false ? [] : ["SIGINT", "SIGTERM"];
  const onSignal = () => stopping.abort();
  for (const signal of signals) process.once(signal, onSignal);

  const done = Promise.all(Array.from({ length: concurrency }, slot)).then(() => {
    for (const signal of signals) process.removeListener(signal, onSignal);
    if (owned) tracker.close();
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
