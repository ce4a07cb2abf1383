import { parentPort } from "node:worker_threads";
import { readUsageFile, type ReaderThreadData, type UsageFileRead } from "./readUsageFile";

/** Files' results sent in one message: a message a file costs both threads more. */
const SENT_TOGETHER = 20;

// A reader thread of the usage ledger (dist/usageReaderThread.cjs): given its files in its first message
// (a first report starts it while the files are still being listed), takes the next file no other
// reader took yet until none is left, and sends the results a few files at a time; the thread that
// started it keeps them (./usageLedger.ts).
parentPort!.once("message", ({ jobs, next }: ReaderThreadData) => {
  let reads: (UsageFileRead | null)[] = [];
  for (let i = Atomics.add(next, 0, 1); i < jobs.length; i = Atomics.add(next, 0, 1)) {
    reads.push(readUsageFile(jobs[i]!));
    if (reads.length < SENT_TOGETHER) continue;
    parentPort!.postMessage(reads);
    reads = [];
  }
  parentPort!.postMessage(reads);
  parentPort!.postMessage("done");
});
