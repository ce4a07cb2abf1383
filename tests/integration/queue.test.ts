import { expect, it } from "vitest";
import { aRecording, aTracker, tempStateDir } from "../helpers/stateDir";
import { eventually, firstLine, startWorker, waitForExit } from "../helpers/processes";

it("4 worker processes drain 2,000 queued requests, each completed exactly once, no SQLITE_BUSY", async () => {
  const stateDir = tempStateDir();
  const { tracker, reader } = aRecording({ stateDir });
  for (let i = 0; i < 2000; i++) tracker.create({ requestId: `job-${i}`, workspace: "drain", state: "queued" });

  const workers = Array.from({ length: 4 }, () => startWorker("drainQueue.cjs", [stateDir, "2"]));
  const outputs = workers.map((worker) => firstLine(worker));
  const codes = await Promise.all(workers.map(waitForExit));
  const stats = (await Promise.all(outputs)).map((line) => JSON.parse(line));

  expect(codes).toEqual([0, 0, 0, 0]);
  expect(stats.map((s) => s.errors)).toEqual([0, 0, 0, 0]);
  expect(stats.reduce((sum, s) => sum + s.completed, 0)).toBe(2000);
  expect(stats.every((s) => s.completed > 0)).toBe(true);
  expect(reader.countsByState()).toMatchObject({ queued: 0, processing: 0, completed: 2000 });
  for (let i = 0; i < 2000; i++) {
    const request = tracker.get(`job-${i}`)!;
    const steps = request.transitions!.map((t) => `${t.from}->${t.to}`);
    expect(steps.filter((s) => s === "queued->processing")).toHaveLength(1);
    expect(steps.filter((s) => s === "processing->completed")).toHaveLength(1);
    expect(request.runs).toBe(1);
  }
}, 180_000);

it("a worker killed mid-request: the running monitor releases it, another completes it, the dead worker's late result is dropped", async () => {
  const stateDir = tempStateDir();
  const heartbeatTimeoutMs = 400;
  const monitorIntervalMs = 100;
  const tracker = aTracker({ stateDir, heartbeatTimeoutMs, monitorIntervalMs });
  tracker.create({ requestId: "victim", workspace: "w", state: "queued" });
  const monitor = tracker.startMonitor();

  const hanging = startWorker("claimAndHang.cjs", [stateDir]);
  const claimed = JSON.parse(await firstLine(hanging));
  hanging.kill("SIGKILL");
  await waitForExit(hanging);

  // Released by the running monitor once the heartbeat is past its timeout (how soon is for a benchmark, not a test).
  await eventually(() => (tracker.get("victim")?.state === "queued" ? true : undefined));
  expect(tracker.get("victim")?.transitions?.at(-1)).toMatchObject({
    by: "monitor",
    reason: `released: the worker's pid ${claimed.pid} is gone (attempt 1 of 3)`,
  });

  const drain = startWorker("drainQueue.cjs", [stateDir]);
  expect(await waitForExit(drain)).toBe(0);
  expect(tracker.get("victim")).toMatchObject({ state: "completed", attempt: 2 });

  const late = tracker.complete("victim", claimed.token, { output: "from beyond" });
  expect(late.outcome).toBe("dropped");
  expect(tracker.get("victim")?.output).not.toBe("from beyond");
  monitor.stop();
}, 60_000);

it("a worker killed after writing its result marker: the monitor applies the result and the request is not run again", async () => {
  const stateDir = tempStateDir();
  const { tracker, operator } = aRecording({ stateDir, heartbeatTimeoutMs: 200 });
  tracker.create({ requestId: "almost", workspace: "w", state: "queued" });

  const worker = startWorker("claimAndHang.cjs", [stateDir, "mark"]);
  await firstLine(worker);
  worker.kill("SIGKILL");
  await waitForExit(worker);

  await eventually(() => (operator.monitorPass().counts.resultsApplied === 1 ? true : undefined), 5000, 100);
  expect(tracker.get("almost")).toMatchObject({ state: "completed", output: "finished before the crash", attempt: 1 });
  expect(tracker.claimNext()).toBeNull();
}, 30_000);

it("a live worker past the threshold is flagged stuck but not released", async () => {
  const stateDir = tempStateDir();
  const { tracker, operator } = aRecording({ stateDir, heartbeatTimeoutMs: 200 });
  tracker.create({ requestId: "slowpoke", workspace: "w", state: "queued" });
  const worker = startWorker("claimAndHang.cjs", [stateDir]);
  const claimed = JSON.parse(await firstLine(worker));
  try {
    const pass = await eventually(
      () => {
        const result = operator.monitorPass();
        return result.counts.stuckAlive === 1 ? result : undefined;
      },
      5000,
      100,
    );
    expect(pass.stuck[0]).toMatchObject({ requestId: "slowpoke", reason: expect.stringMatching(new RegExp(`worker ${claimed.pid} alive`)) });
    expect(tracker.get("slowpoke")?.state).toBe("processing");
  } finally {
    worker.kill("SIGKILL");
    await waitForExit(worker);
  }
  expect(operator.monitorPass().counts.released).toBe(1);
}, 30_000);

it("waitForResult resolves when another process finishes the request", async () => {
  const stateDir = tempStateDir();
  const { tracker, upkeep } = aRecording({ stateDir });
  tracker.create({ requestId: "elsewhere", workspace: "w", state: "queued" });
  const waiting = tracker.waitForResult("elsewhere", { timeoutMs: 20_000 });
  const worker = startWorker("drainQueue.cjs", [stateDir]);
  const finished = await waiting;
  expect(finished).toMatchObject({ state: "completed", output: expect.stringMatching(/^done by \d+$/) });
  expect(await waitForExit(worker)).toBe(0);
  expect(upkeep.pendingWaits()).toBe(0);
}, 30_000);

it("runWorker stops cleanly on SIGTERM: the request in hand finishes, nothing is left processing", async () => {
  const stateDir = tempStateDir();
  const tracker = aTracker({ stateDir });
  tracker.create({ requestId: "in-hand", workspace: "w", state: "queued" });
  tracker.create({ requestId: "not-started", workspace: "w", state: "queued" });
  const worker = startWorker("slowWorker.cjs", [stateDir]);
  let output = "";
  worker.stdout?.on("data", (chunk) => (output += chunk));
  await eventually(() => (output.includes("started in-hand") ? true : undefined));
  worker.kill("SIGTERM");
  expect(await waitForExit(worker)).toBe(0);
  expect(output).toMatch(/stopped \{"completed":1,"failed":0,"dropped":0\}/);
  expect(tracker.get("in-hand")).toMatchObject({ state: "completed", output: "finished after the signal" });
  expect(tracker.get("not-started")?.state).toBe("queued");
}, 30_000);
