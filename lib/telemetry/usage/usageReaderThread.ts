import { parentPort, workerData } from "node:worker_threads";
import { readUsageFile, type UsageJob } from "./readUsageFile";

// A reader thread of the usage ledger (dist/usageReaderThread.cjs): reads its share of the files and
// sends each file's result as it has it; the thread that started it keeps them (./usageLedger.ts).
for (const job of (workerData as { jobs: UsageJob[] }).jobs) parentPort!.postMessage(readUsageFile(job));
parentPort!.postMessage("done");
