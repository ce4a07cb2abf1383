import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runSharedWorker } from "../../lib/postgres/runSharedWorker";
import { aSharedTracker, postgresForFile, sqlOn } from "../helpers/postgres";
import { childEnv, eventually, waitForExit, WORKERS } from "../helpers/processes";

const cluster = postgresForFile();
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/**
 * runSharedWorker in a process of its own (tests/helpers/workers/sharedRunWorker.cjs). `heartbeatTimeout`
 * short only where a worker is killed: elsewhere a live worker held up on a busy machine must keep its claims.
 */
function aWorkerProcess(url: string, host: string, mode: "idle" | "until-stopped", heartbeatTimeout = "5m") {
  const child = spawn(process.execPath, [path.join(WORKERS, "sharedRunWorker.cjs"), url, host, mode], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...childEnv(), REQWATCH_HEARTBEAT_TIMEOUT: heartbeatTimeout },
  });
  children.push(child);
  let out = "";
  let errors = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  child.stderr!.on("data", (chunk) => (errors += chunk));
  const lines = () =>
    out
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { child, lines, errors: () => errors };
}

describe("runSharedWorker", () => {
  it("two worker processes complete every request once, retry a failing one and fail a permanent one, each result recorded before its report", async () => {
    const url = await cluster().newDatabase();
    const gateway = await aSharedTracker(url);
    const prompts = [...Array.from({ length: 28 }, (_, i) => `ask ${i}`), "fail-once", "permanent"];
    const ids: string[] = [];
    for (const prompt of prompts) ids.push((await gateway.create({ workspace: "chat", prompt, state: "queued" })).requestId);

    const workers = [aWorkerProcess(url, "host-a", "idle"), aWorkerProcess(url, "host-b", "idle")];
    for (const worker of workers) expect(await waitForExit(worker.child), worker.errors()).toBe(0);

    const records = await Promise.all(ids.map((id) => gateway.get(id)));
    const byPrompt = new Map(records.map((record) => [record!.prompt, record!]));
    expect(records.filter((record) => record!.state === "completed")).toHaveLength(29);
    expect(byPrompt.get("permanent")).toMatchObject({ state: "failed", error: "this request cannot succeed", attempt: 1 });
    expect(byPrompt.get("fail-once")).toMatchObject({ state: "completed", attempt: 2 });
    for (const record of records) {
      const completions = (record!.transitions ?? []).filter((step) => step.to === "completed" && !step.dropped);
      expect(completions.length, record!.requestId).toBe(record!.state === "completed" ? 1 : 0);
    }
    const totals = workers.map((worker) => worker.lines().at(-1)!.stats as { completed: number; failed: number; dropped: number });
    expect(totals.reduce((sum, stats) => sum + stats.completed, 0)).toBe(29);
    expect(totals.reduce((sum, stats) => sum + stats.failed, 0)).toBe(2);
    expect(totals.reduce((sum, stats) => sum + stats.dropped, 0)).toBe(0);
    // Each claim kept its worker's result before the worker reported it.
    const unrecorded = await sqlOn(url, "SELECT token FROM claims WHERE result IS NULL");
    expect(unrecorded).toEqual([]);
  }, 120_000);

  it("a worker killed mid-request: its claim is taken back after the heartbeat timeout and another worker completes the request once", async () => {
    const url = await cluster().newDatabase();
    const gateway = await aSharedTracker(url);
    const { requestId } = await gateway.create({ workspace: "chat", prompt: "hang-once", state: "queued" });

    const first = aWorkerProcess(url, "host-a", "until-stopped", "1s");
    await eventually(() => first.lines().some((line) => line.started === requestId) || undefined, 30_000);
    first.child.kill("SIGKILL");
    await waitForExit(first.child);

    const second = aWorkerProcess(url, "host-b", "until-stopped", "1s");
    const done = await gateway.waitForResult(requestId, { timeoutMs: 60_000 });
    second.child.kill("SIGTERM");
    expect(await waitForExit(second.child), second.errors()).toBe(0);

    expect(done).toMatchObject({ state: "completed", output: "done on host-b", attempt: 2 });
    const steps = (done.transitions ?? []).map((step) => [step.to, step.by]);
    expect(steps.filter(([to]) => to === "completed")).toHaveLength(1);
    const released = (done.transitions ?? []).find((step) => step.to === "queued" && step.by === "monitor");
    expect(released?.reason).toMatch(/^released: no heartbeat for .* from host-a \d+ on host-a \(attempt 1 of 3\)$/);
    expect(second.lines().at(-1)).toMatchObject({ host: "host-b", stats: { completed: 1, failed: 0, dropped: 0 } });
  }, 120_000);

  it("a claim taken back while its handler runs aborts the handler's signal; its late result is dropped by the fence and the next attempt completes", async () => {
    const url = await cluster().newDatabase();
    const tracker = await aSharedTracker(url, { heartbeatTimeoutMs: 60_000 });
    // Another host's monitor, its clock past the timeout: every beat the worker wrote is older than it allows.
    const monitor = await aSharedTracker(url, { heartbeatTimeoutMs: 60_000, now: () => Date.now() + 600_000 });
    const { requestId } = await tracker.create({ workspace: "chat", prompt: "slow", state: "queued" });
    let started!: () => void;
    const handling = new Promise<void>((resolve) => (started = resolve));
    let aborted = 0;
    const worker = runSharedWorker({
      tracker,
      handleSignals: false,
      stopWhenIdle: true,
      heartbeatIntervalMs: 20,
      handler: async (request, { signal }) => {
        if (request.attempt !== 1) return { output: "second attempt" };
        started();
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        aborted++;
        return { output: "too late" };
      },
    });
    await handling;
    expect(await monitor.takeBackStaleClaims()).toEqual([requestId]);
    const stats = await worker.done;
    expect(aborted).toBe(1);
    expect(stats).toEqual({ completed: 1, failed: 0, dropped: 1 });
    const record = await tracker.get(requestId);
    expect(record).toMatchObject({ state: "completed", attempt: 2, output: "second attempt" });
    const dropped = record!.transitions!.filter((step) => step.dropped);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]!.reason).toMatch(/^late completion dropped: /);
  }, 60_000);
});
