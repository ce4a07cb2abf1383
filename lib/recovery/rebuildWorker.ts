// A rebuild's reader thread (bundled as dist/rebuildWorker.cjs): reads its share of the request
// files (or only stats them, to order a rebuild newest first) and hands the results to the writing
// thread a batch at a time, never more than WINDOW batches ahead of it (lib/recovery/parallelReads.ts).
import { parentPort, workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { readBatch, type ReadMode } from "./fileRead";

export interface RebuildWorkerData {
  mode: ReadMode;
  requestsDir: string;
  /** This thread's share, in batches. */
  batches: string[][];
  port: MessagePort;
  /** [batches posted, batches taken by the writer], shared with the writer. */
  counters: SharedArrayBuffer;
  /** Bumped on every post, so a writer that waits synchronously can sleep until any reader has something. */
  posted: SharedArrayBuffer;
}

/** Batches a reader may be ahead of the writer: bounds the memory the rows wait in. */
const WINDOW = 4;

if (parentPort) {
  const { mode, requestsDir, batches, port, counters, posted } = workerData as RebuildWorkerData;
  const mine = new Int32Array(counters);
  const anyPosted = new Int32Array(posted);
  const post = (message: unknown) => {
    port.postMessage(message);
    Atomics.add(mine, 0, 1);
    Atomics.add(anyPosted, 0, 1);
    Atomics.notify(anyPosted, 0);
  };
  try {
    for (const batch of batches) {
      for (let taken = Atomics.load(mine, 1); Atomics.load(mine, 0) - taken >= WINDOW; taken = Atomics.load(mine, 1)) Atomics.wait(mine, 1, taken, 1000);
      post({ results: readBatch(mode, requestsDir, batch) });
    }
  } catch (error) {
    post({ error: (error as Error).message });
  }
}
