import { plural } from "../model/plural";
import type { WorkerStatus } from "../sources/workerClient";

/** claude-mem's worker as its last look found it, in one line: what it holds, or that it is not running and where reqwatch asked. */
export function workerLine(worker: WorkerStatus): string {
  const snap = worker.snapshot;
  if (!worker.running || !snap) return worker.error ?? `claude-mem's worker is not running on ${worker.url}`;
  return [
    `claude-mem${snap.version ? ` ${snap.version}` : ""}'s worker${snap.pid ? ` (pid ${snap.pid})` : ""} on ${worker.url}: ${plural(snap.queueDepth, "observation")} queued`,
    snap.isProcessing ? "processing" : "idle",
    plural(snap.activeSessions, "active session"),
    `${snap.parkedSessions} parked`,
    ...snap.degraded.map((entry) => `degraded: ${entry}`),
  ].join(", ");
}
