import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
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

/** Resolves once the child's stdout contains `line`. */
export function waitForLine(child: ChildProcess, line: string): Promise<void> {
  return watchOutput(child, (seen) => (seen.includes(line) ? undefined : null), `"${line}"`).then(() => undefined);
}

/**
 * Resolves with `pick(stdout so far)` once that is not null; rejects, with stderr, if the child
 * exits first.
 */
function watchOutput<T>(child: ChildProcess, pick: (seen: string) => T | null, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    let seen = "";
    let errors = "";
    child.stderr?.on("data", (chunk) => (errors += chunk));
    child.stdout?.on("data", (chunk) => {
      seen += chunk;
      const picked = pick(seen);
      if (picked !== null) resolve(picked);
    });
    child.on("exit", (code) => reject(new Error(`worker exited (${code}) before ${what}: ${errors}`)));
  });
}

/** A child whose stdout and stderr are kept, as one text, for a test to read (`output()`). */
export function withOutput<T extends ChildProcess>(child: T): T & { output: () => string } {
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  return Object.assign(child, { output: () => output });
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

/** Resolves with the child's first line of stdout once it is written. */
export function firstLine(child: ChildProcess): Promise<string> {
  return watchOutput(child, (seen) => (seen.includes("\n") ? seen.slice(0, seen.indexOf("\n")) : null), "writing a line");
}

/** Poll `check` until it returns (or resolves to) a value, not undefined, or `timeoutMs` passes. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A port no one listens on now, on 127.0.0.1: for a server a test starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Every other process's open descriptors of `file`, with their access mode from /proc (0: read only, 1: write only, 2: read and write). */
export function openModesOf(file: string): { pid: number; mode: number }[] {
  const real = fs.realpathSync(file);
  const found: { pid: number; mode: number }[] = [];
  for (const pid of fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) !== real) continue;
        const flags = /^flags:\s+([0-7]+)$/m.exec(fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"))![1]!;
        found.push({ pid: Number(pid), mode: parseInt(flags, 8) & 3 });
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return found;
}
