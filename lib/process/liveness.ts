import fs from "node:fs";
import os from "node:os";

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's start time; 100 on every mainstream architecture. */
const CLOCK_TICKS_PER_SECOND = 100;

let bootTimeMs: number | null | undefined;

function readBootTimeMs(): number | null {
  if (bootTimeMs !== undefined) return bootTimeMs;
  try {
    const match = /^btime (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"));
    bootTimeMs = match ? Number(match[1]) * 1000 : null;
  } catch {
    bootTimeMs = null;
  }
  return bootTimeMs;
}

/**
 * When process `pid` started, in epoch milliseconds, from /proc; null where there is no /proc or no
 * such process. Two processes that ever held the same pid have different start times, so this
 * tells a recycled pid from the worker that claimed a request.
 */
export function processStartedAt(pid: number): number | null {
  const boot = readBootTimeMs();
  if (boot === null) return null;
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name (field 2) may contain spaces and parentheses; fields after the last ")" are plain.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[19]); // field 22, starttime
  return Number.isFinite(ticks) ? boot + Math.round((ticks * 1000) / CLOCK_TICKS_PER_SECOND) : null;
}

/** Process `pid`'s start, as /proc says it (clock ticks since boot, as text); null where there is no such process or no /proc. */
export function processStartTicks(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface ProcessIdentity {
  pid: number;
  host: string;
  processStartedAt: number | null;
}

let self: ProcessIdentity | undefined;

/** This process, as a claim records it. */
export function currentProcess(): ProcessIdentity {
  self ??= { pid: process.pid, host: os.hostname(), processStartedAt: processStartedAt(process.pid) };
  return self;
}

export type Liveness = "alive" | "gone" | "unknown";

/**
 * Is the process that made a claim still running? `unknown` for a claim made on another host (its
 * heartbeat is all we have). A pid that exists but started at another time is a recycled pid: gone.
 */
export function claimLiveness(claim: { pid?: number; host?: string; processStartedAt?: number | null }): Liveness {
  if (claim.pid === undefined) return "unknown";
  if (claim.host !== undefined && claim.host !== os.hostname()) return "unknown";
  if (!pidExists(claim.pid)) return "gone";
  if (claim.processStartedAt == null) return "alive";
  const started = processStartedAt(claim.pid);
  if (started === null) return "alive";
  return started === claim.processStartedAt ? "alive" : "gone";
}
