import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Give the calling thread a lower scheduling priority (a higher nice value), and so the threads it
 * starts, which inherit it: work in the background then takes the cores only when what answers a
 * person does not need them. On Linux a thread's id is a pid to setpriority(2); where there is no
 * /proc/thread-self the thread keeps its priority.
 */
export function lowerThreadPriority(nice: number): void {
  try {
    const threadId = Number(path.basename(fs.readlinkSync("/proc/thread-self")));
    if (Number.isInteger(threadId) && threadId > 0) os.setPriority(threadId, nice);
  } catch {
    // Not Linux, or not allowed: the same work at the same priority.
  }
}
