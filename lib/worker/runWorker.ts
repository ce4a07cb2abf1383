import { setTimeout as sleep } from "node:timers/promises";
import type { CompleteResult, RunWorkerOptions, Tracker, WorkerHandle, WorkerStats } from "../types";
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
  const worker = new WorkerLoop(options);
  // A plain object: a caller may take `stop` off it.
  return { stats: worker.stats, done: worker.done, stop: () => worker.stop() };
}

type Outcome = { ok: true; result: CompleteResult } | { ok: false; error: string; retryable: boolean };

/** The slots of one `runWorker`, the tracker they claim from, and what they have delivered. */
class WorkerLoop {
  readonly stats: WorkerStats = { completed: 0, failed: 0, dropped: 0 };
  readonly done: Promise<WorkerStats>;

  readonly #options: RunWorkerOptions;
  readonly #tracker: Tracker;
  readonly #pollIntervalMs: number;
  readonly #heartbeatIntervalMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #stopping = new AbortController();

  constructor(options: RunWorkerOptions) {
    this.#options = options;
    const tracker = (this.#tracker = options.tracker ?? openTracker({ stateDir: options.stateDir, recover: false }));
    const owned = !options.tracker;
    const concurrency = options.concurrency ?? 1;
    this.#pollIntervalMs = options.pollIntervalMs ?? 200;
    this.#heartbeatIntervalMs = options.heartbeatIntervalMs ?? Math.max(100, Math.floor(tracker.options.heartbeatTimeoutMs / 3));
    this.#onError = options.onError ?? ((error: unknown) => console.error("reqwatch worker:", error));

    const signals: NodeJS.Signals[] = options.handleSignals === false ? [] : ["SIGINT", "SIGTERM"];
    const onSignal = () => this.#stopping.abort();
    for (const signal of signals) process.once(signal, onSignal);

    this.done = Promise.all(Array.from({ length: concurrency }, () => this.#slot())).then(() => {
      for (const signal of signals) process.removeListener(signal, onSignal);
      if (owned) tracker.close();
      return this.stats;
    });
  }

  stop(): Promise<WorkerStats> {
    this.#stopping.abort();
    return this.done;
  }

  async #slot(): Promise<void> {
    const options = this.#options;
    const stopping = this.#stopping.signal;
    while (!stopping.aborted) {
      let claim;
      try {
        claim = this.#tracker.claimNext({ workspace: options.workspace, worker: options.name });
      } catch (error) {
        this.#onError(error);
        claim = null;
      }
      if (!claim) {
        if (options.stopWhenIdle) return;
        await sleep(this.#pollIntervalMs, undefined, { signal: stopping }).catch(() => undefined);
        continue;
      }
      await this.#handle(claim.request, claim.token);
    }
  }

  async #handle(request: RequestRecord, token: string): Promise<void> {
    const tracker = this.#tracker;
    const lost = new AbortController();
    const signal = AbortSignal.any([this.#stopping.signal, lost.signal]);
    const beat = setInterval(() => {
      try {
        if (!tracker.heartbeat(request.requestId, token)) lost.abort(new Error("the claim is no longer current"));
      } catch (error) {
        this.#onError(error);
      }
    }, this.#heartbeatIntervalMs);
    try {
      let outcome: Outcome;
      try {
        const beatNow = () => tracker.heartbeat(request.requestId, token);
        outcome = { ok: true, result: (await this.#options.handler(request, { token, signal, heartbeat: beatNow })) ?? {} };
      } catch (error) {
        outcome = {
          ok: false,
          error: error instanceof Error ? error.message : String(error),
          retryable: (error as { retryable?: boolean })?.retryable !== false,
        };
      }
      clearInterval(beat);
      this.#deliver(request.requestId, token, outcome);
    } catch (error) {
      // Reporting failed (say the file became unreadable): the marker stays for the monitor, and the loop goes on.
      this.#onError(error);
    } finally {
      clearInterval(beat);
    }
  }

  /** The result marker first, then the delivery: a crash between them loses nothing. */
  #deliver(requestId: string, token: string, outcome: Outcome): void {
    const tracker = this.#tracker;
    const name = this.#options.name;
    if (outcome.ok) {
      const { fields, ...named } = outcome.result;
      tracker.recordResult(requestId, token, { outcome: "completed", fields: { ...fields, ...named } });
      const delivery = tracker.complete(requestId, token, outcome.result, name);
      if (delivery.outcome === "dropped") this.stats.dropped++;
      else this.stats.completed++;
    } else {
      tracker.recordResult(requestId, token, { outcome: "failed", error: outcome.error, retryable: outcome.retryable });
      const delivery = tracker.fail(requestId, token, outcome.error, { retryable: outcome.retryable, by: name });
      if (delivery.outcome === "dropped") this.stats.dropped++;
      else this.stats.failed++;
    }
  }
}
