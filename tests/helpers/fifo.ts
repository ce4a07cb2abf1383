import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterEach } from "vitest";
import { childEnv, waitForLine, WORKERS } from "./processes";

const feeders: ChildProcess[] = [];
afterEach(() => {
  for (const feeder of feeders.splice(0)) feeder.kill();
});

/** A FIFO (a named pipe) at `file`, with no writer: a reader that opens it blocking waits for ever. */
export function aFifo(file: string): string {
  const made = spawnSync("mkfifo", [file]);
  if (made.status !== 0) throw new Error(`mkfifo ${file}: ${made.stderr}`);
  return file;
}

/**
 * Hold the FIFO's writing end in a child process that answers each reader with `line`: code that
 * opens it to read reads that line rather than freezing the test run, so the test fails on what it
 * shows. The child is stopped after the test.
 */
export async function feedFifo(file: string, line: string): Promise<void> {
  const feeder = spawn(process.execPath, [path.join(WORKERS, "fifoFeeder.cjs"), file, line], { stdio: ["ignore", "pipe", "pipe"], env: childEnv() });
  feeders.push(feeder);
  await waitForLine(feeder, "ready");
}
