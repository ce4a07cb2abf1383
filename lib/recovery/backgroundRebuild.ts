import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { IndexingProgress, TrackerContext } from "../store/context";
import type { RecoveryReport } from "../types";
import type { RebuildThreadData } from "./rebuildThread";

/** The rebuild thread's script, beside the bundle this runs from (dist/); absent when the sources run directly (tests, `npm run dev`). */
const threadFile = () => path.join(/*turbopackIgnore: true*/ __dirname, "rebuildThread.cjs");

/** How often the serving thread copies the rebuild's progress into `progress`. */
const PROGRESS_EVERY_MS = 20;

/**
 * Run the index's rebuild on a thread of its own (lib/recovery/rebuildThread.ts), with its progress
 * copied into `progress` as it goes. Resolves with its report; null when `stopping` ended it first
 * (the index stays marked unfinished: the next open rebuilds it). Null at once, not a promise, when
 * there is no thread script to run (the sources run directly): the caller rebuilds in this thread.
 */
export function rebuildOnThread(ctx: TrackerContext, progress: IndexingProgress, stopping: AbortSignal): Promise<RecoveryReport | null> | null {
  if (!fs.existsSync(threadFile())) return null;
  const shared = new SharedArrayBuffer(8);
  const counters = new Int32Array(shared);
  // The clock and the random source stay here (functions do not cross to a thread); the thread uses the real ones.
  const options = Object.fromEntries(Object.entries(ctx.options).filter(([, value]) => typeof value !== "function")) as RebuildThreadData["options"];
  const workerData: RebuildThreadData = {
    root: ctx.dir.root,
    storeDir: ctx.dir.storeDir,
    ipcDir: ctx.dir.ipcDir,
    ownership: ctx.ownership,
    options,
    progress: shared,
  };
  const worker = new Worker(/*turbopackIgnore: true*/ threadFile(), { workerData });
  const copy = setInterval(() => {
    progress.done = Atomics.load(counters, 0);
    progress.total = Atomics.load(counters, 1);
  }, PROGRESS_EVERY_MS);
  copy.unref();
  return new Promise<RecoveryReport | null>((resolve, reject) => {
    const end = () => {
      clearInterval(copy);
      stopping.removeEventListener("abort", abort);
    };
    const abort = () => {
      end();
      void worker.terminate();
      resolve(null);
    };
    stopping.addEventListener("abort", abort);
    worker.once("message", (message: { report: RecoveryReport } | { error: string }) => {
      end();
      if ("error" in message) reject(new Error(message.error));
      else resolve(message.report);
    });
    worker.once("error", (error) => {
      end();
      reject(error);
    });
    worker.once("exit", () => {
      end();
      resolve(null);
    });
  });
}
