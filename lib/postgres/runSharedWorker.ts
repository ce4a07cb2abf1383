import { ReqwatchError } from "../model/errors";
import type { RunSharedWorkerOptions, WorkerHandle } from "../types";
import { loopSettings, runWorkerLoop } from "../queue/workerLoop";

/**
 * `runWorker` on the shared store: the same loop (lib/queue/workerLoop.ts) on a tracker that
 * `openSharedTracker` gave. Liveness is the heartbeat alone, so it beats a third of the heartbeat
 * timeout apart by default; a worker killed mid-request leaves a claim the monitor (or any
 * worker's next claim) takes back once that timeout passes.
 */
export function runSharedWorker(options: RunSharedWorkerOptions): WorkerHandle {
  const { tracker } = options;
  if (!tracker || typeof tracker.claimNext !== "function") {
    throw new ReqwatchError("BAD_INPUT", 'Option "tracker" must be a shared tracker from openSharedTracker.');
  }
  // The caller opened the tracker and closes it: it may share it with a gateway in the same process.
  return runWorkerLoop(
    tracker,
    loopSettings(options, tracker.options.heartbeatTimeoutMs, () => undefined),
  );
}
