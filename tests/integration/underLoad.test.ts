import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, waitForExit } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";

// scripts/under-load.mjs with a small stand-in for `npm test`: a node process that exits 3 once the
// test makes the file it waits for, so the test decides when "the suite" ends. It also ends after a
// minute by itself, so a test run stopped midway leaves no script (and no busy process) running.
const SCRIPT = path.resolve(__dirname, "../../scripts/under-load.mjs");
const STAND_IN = 'setInterval(() => require("node:fs").existsSync(process.argv[1]) && process.exit(3), 20); setTimeout(() => process.exit(4), 60_000);';
const started: ChildProcess[] = [];
const leftPids: number[] = [];

afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const pid of leftPids.splice(0)) if (running(pid)) process.kill(pid, "SIGKILL");
});

/** Whether `pid` runs: it exists and is not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

/** CPU time (user + system) `pid` has used, in clock ticks. */
function cpuTicks(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** The script running the stand-in; resolves once it has named its busy processes and the stand-in runs. */
async function underLoad() {
  const done = path.join(tempParent(), "done");
  const child = spawn(process.execPath, [SCRIPT, process.execPath, "-e", STAND_IN, done], { stdio: ["ignore", "ignore", "pipe"] });
  started.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const busy = await eventually(() => {
    const pids = /busy processes \(pids (\d+), (\d+)\)/.exec(stderr);
    return pids ? [Number(pids[1]), Number(pids[2])] : undefined;
  });
  leftPids.push(...busy);
  const standIn = await eventually(() => childrenOf(child.pid!).find((pid) => !busy.includes(pid)));
  leftPids.push(standIn);
  return { child, busy, standIn, finish: () => fs.writeFileSync(done, ""), stderr: () => stderr };
}

function childrenOf(pid: number): number[] {
  return fs
    .readdirSync(`/proc/${pid}/task`)
    .flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean))
    .map(Number);
}

describe("scripts/under-load.mjs", () => {
  it("runs the command beside two busy processes, each using a CPU, and stops them when it ends, with its exit code", async () => {
    const { child, busy, finish, stderr } = await underLoad();
    expect(stderr()).toContain(`beside: ${process.execPath} -e`);
    const before = busy.map(cpuTicks);
    // Busy: each has used a tenth of a second of CPU more since it was first seen.
    await eventually(() => (busy.every((pid, i) => cpuTicks(pid) >= before[i]! + 10) ? true : undefined), 30_000);
    finish();
    expect(await waitForExit(child)).toBe(3);
    await eventually(() => (busy.some(running) ? undefined : true));
  });

  it("stopped by a signal, passes it to the command and stops the busy processes: the exit code says which signal", async () => {
    const { child, busy, standIn } = await underLoad();
    child.kill("SIGINT");
    expect(await waitForExit(child)).toBe(130);
    await eventually(() => ([...busy, standIn].some(running) ? undefined : true));
  });

  it("killed outright (SIGKILL), leaves no busy process running", async () => {
    const { child, busy, standIn, finish } = await underLoad();
    child.kill("SIGKILL");
    await waitForExit(child);
    await eventually(() => (busy.some(running) ? undefined : true));
    // The command itself is left to end as it would (as `npm test` would go on); this one ends on its file.
    expect(running(standIn)).toBe(true);
    finish();
    await eventually(() => (running(standIn) ? undefined : true));
  });
});
