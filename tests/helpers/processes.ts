import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import path from "node:path";

export const WORKERS = path.resolve(__dirname, "workers");

/** Child processes start faster without the machine's extra CA bundle, which they never use. */
export function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

export function startWorker(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, [path.join(WORKERS, script), ...args], { stdio: ["ignore", "pipe", "pipe"], env: childEnv() });
}

export function waitForLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = "";
    let errors = "";
    child.stderr?.on("data", (chunk) => (errors += chunk));
    child.stdout?.on("data", (chunk) => {
      seen += chunk;
      if (seen.includes(line)) resolve();
    });
    child.on("exit", (code) => reject(new Error(`worker exited (${code}) before "${line}": ${errors}`)));
  });
}

export function waitForExit(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.on("exit", (code) => resolve(code));
  });
}

/** The pid of a process that has exited: a worker that is gone. */
export function aDeadPid(): number {
  return spawnSync("true").pid!;
}

/** Collects a child's stdout and resolves with its first line once it is written. */
export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    let errors = "";
    child.stderr?.on("data", (chunk) => (errors += chunk));
    child.stdout?.on("data", (chunk) => {
      seen += chunk;
      const end = seen.indexOf("\n");
      if (end >= 0) resolve(seen.slice(0, end));
    });
    child.on("exit", (code) => reject(new Error(`exited (${code}) before writing a line: ${errors}`)));
  });
}

/** Poll `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function eventually<T>(check: () => T | undefined, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
