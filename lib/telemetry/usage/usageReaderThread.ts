import { parentPort } from "node:worker_threads";
import { readUsageFile, type ReaderThreadData } from "./readUsageFile";

// A reader thread of the usage ledger (dist/usageReaderThread.cjs): given its files in its first message
// (a first report starts it while the files are still being listed), takes the next file no thread took
// yet until none is left, and sends each file's result as it has it; the thread that started it keeps
// them (./usageLedger.ts).
parentPort!.once("message", ({ jobs, next }: ReaderThreadData) => {
  for (let i = Atomics.add(next, 0, 1); i < jobs.length; i = Atomics.add(next, 0, 1)) parentPort!.postMessage(readUsageFile(jobs[i]!));
  parentPort!.postMessage("done");
});
