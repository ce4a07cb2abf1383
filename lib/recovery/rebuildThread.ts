// A rebuild on a thread of its own (bundled as dist/rebuildThread.cjs), for a process that serves
// while it runs (the dashboard on a folder it opens for the first time): the same rebuild as at
// open (lib/recovery/recover.ts), on the thread's own connection to the index, newest files first,
// with its progress in shared memory. The serving thread only reads what each batch committed.
import { parentPort, workerData } from "node:worker_threads";
import { connectIndex } from "../db/openIndex";
import { stateDirAt } from "../stateFiles/stateDir";
import { Sessions } from "../sessions/sessionTracker";
import type { TrackerContext } from "../store/context";
import type { Ownership, ResolvedTrackerOptions } from "../types";
import { recover } from "./recover";
import { lowerThreadPriority } from "../process/threadPriority";

/** The rebuild's threads (this one and its readers) yield the cores to the server answering meanwhile, and to the browser. */
const BACKGROUND_NICE = 10;

export interface RebuildThreadData {
  root: string;
  storeDir: string;
  ipcDir: string | null;
  ownership: Ownership;
  options: Omit<ResolvedTrackerOptions, "random" | "now">;
  /** [files written, files to write], read by the serving thread. */
  progress: SharedArrayBuffer;
}

if (parentPort) {
  lowerThreadPriority(BACKGROUND_NICE);
  const data = workerData as RebuildThreadData;
  const progress = new Int32Array(data.progress);
  const dir = stateDirAt(data.root, data.storeDir, data.ipcDir);
  const db = connectIndex(dir.indexFile);
  const ctx: TrackerContext = {
    dir,
    ownership: data.ownership,
    db,
    options: { ...data.options, random: Math.random, now: Date.now },
    now: Date.now,
    rebuilding: true,
    rebuild: {
      newestFirst: true,
      onProgress: (done, total) => {
        Atomics.store(progress, 1, total);
        Atomics.store(progress, 0, done);
      },
    },
  };
  try {
    // No state changes (processingStuckAfterMs null): what the dashboard's open would do, on this thread.
    parentPort.postMessage({ report: recover(ctx, new Sessions(ctx), { processingStuckAfterMs: null }) });
  } catch (error) {
    parentPort.postMessage({ error: (error as Error).message });
  } finally {
    db.close();
  }
}
