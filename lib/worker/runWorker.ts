import type { RunWorkerOptions, WorkerHandle } from "../types";
import { openTracker } from "../tracker";
import { loopSettings, runWorkerLoop } from "../queue/workerLoop";

/** Throw this (or any error with `retryable: false`) for a failure another attempt cannot fix. */
export class PermanentError extends Error {
  readonly retryable = false;
}

/**
 * Claim, heartbeat, record the result marker, then complete or fail, `concurrency` at a time. A
 * handler that throws fails its request (retryably, unless the error says otherwise) and the worker
 * goes on: one bad request never stops the loop. The loop itself is lib/queue/workerLoop.ts, which
 * the shared store's `runSharedWorker` runs too.
 */
export function runWorker(options: RunWorkerOptions): WorkerHandle {
  const tracker = options.tracker ?? openTracker({ stateDir: options.stateDir, recover: false });
  const owned = !options.tracker;
  return runWorkerLoop(
    tracker,
    loopSettings(options, tracker.options.heartbeatTimeoutMs, () => {
      if (owned) tracker.close();
    }),
  );
}
