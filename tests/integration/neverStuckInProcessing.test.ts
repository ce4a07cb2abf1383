/**
 * Six ways a request tracker can leave work stuck in `processing` for good (a claim kept after a
 * crash, a failed completion, a hook's odd exit code, a worker loop that stops, recovery only at
 * start-up, a failure recorded in two writes). Each is a scenario here, named after what it guarantees.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runWorker } from "../../lib/worker/runWorker";
import { runCli } from "../helpers/cli";
import { eventually, firstLine, startWorker, waitForExit } from "../helpers/processes";
import { aRecording, requestPath, tempStateDir } from "../helpers/stateDir";

function queued(ids: string[], options: Parameters<typeof aRecording>[0] = {}) {
  const stateDir = tempStateDir();
  const recording = aRecording({ stateDir, random: () => 0, backoff: { baseMs: 0, capMs: 0 }, ...options });
  for (const requestId of ids) recording.tracker.create({ requestId, workspace: "w", state: "queued" });
  return { stateDir, ...recording };
}

describe("nothing stays stuck in processing", () => {
  it("a handler that crashes leaves no claim held", async () => {
    const { tracker, reader } = queued(["boom", "next"]);
    const worker = runWorker({
      tracker,
      stopWhenIdle: true,
      handleSignals: false,
      handler: (request) => {
        if (request.requestId === "boom" && request.attempt === 1) throw new Error("generator crashed");
        return { output: "ok" };
      },
    });
    const stats = await worker.done;
    // Nothing is left processing: the failure released the claim in the same write that recorded it.
    expect(reader.countsByState()).toMatchObject({ processing: 0, completed: 2 });
    expect(tracker.get("boom")).toMatchObject({ state: "completed", attempt: 2, claim: null });
    expect(stats).toEqual({ completed: 2, failed: 1, dropped: 0 });
  });

  it("one failing completion does not strand the others", async () => {
    const { stateDir, tracker } = queued(["a", "b", "c"]);
    const errors: unknown[] = [];
    const worker = runWorker({
      tracker,
      stopWhenIdle: true,
      handleSignals: false,
      onError: (error) => errors.push(error),
      handler: (request) => {
        // Another tool mangles b's file while it runs: completing b must fail, and only b.
        if (request.requestId === "b") fs.writeFileSync(requestPath(stateDir, "b"), "{ torn");
        return { output: `done ${request.requestId}` };
      },
    });
    await worker.done;
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/requests\/b.json: invalid JSON/);
    expect(tracker.get("a")?.state).toBe("completed");
    expect(tracker.get("c")?.state).toBe("completed");
    // b's result is not lost: its marker waits for the monitor, which applies it once the file is readable again.
    expect(fs.existsSync(path.join(stateDir, "results", "b.json"))).toBe(true);
  });

  it("the CLI exits 0, 1 or 2, never anything else, with one line on stderr", () => {
    const stateDir = tempStateDir();
    expect(runCli(["create", "-w", "w", "--id", "h"], { stateDir }).code).toBe(0);
    const notADir = path.join(tempStateDir(), "file");
    fs.writeFileSync(notADir, "");
    const cases = [
      { args: ["update", "h", "--state", "completed"], code: 1 },
      { args: ["update", "missing", "--state", "queued"], code: 1 },
      { args: ["--state-dir", notADir, "list"], code: 2 },
      { args: ["update", "h", "--tokens", "lots"], code: 2 },
      { args: ["frobnicate"], code: 2 },
    ];
    for (const { args, code } of cases) {
      const result = runCli(args, { stateDir });
      expect(result.code, args.join(" ")).toBe(code);
      expect(result.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(result.stderr, args.join(" ")).not.toMatch(/\n\s+at /);
    }
  });

  it("a handler that throws does not stop the worker", async () => {
    const { tracker, reader } = queued(["first", "second", "third"], { maxAttempts: 1 });
    const seen: string[] = [];
    const worker = runWorker({
      tracker,
      stopWhenIdle: true,
      handleSignals: false,
      handler: (request) => {
        seen.push(request.requestId);
        if (request.requestId === "first") throw new Error("agent threw while consuming");
        return {};
      },
    });
    await worker.done;
    expect(seen).toEqual(["first", "second", "third"]);
    expect(reader.countsByState()).toMatchObject({ failed: 1, completed: 2, processing: 0 });
  });

  it("the running monitor recovers a request orphaned after it started, not only a start-up recovery", async () => {
    const { stateDir, tracker } = queued([], { heartbeatTimeoutMs: 300, monitorIntervalMs: 100 });
    const monitor = tracker.startMonitor();
    // Only now, with the monitor already running, does a worker claim and die.
    tracker.create({ requestId: "orphan", workspace: "w", state: "queued" });
    const worker = startWorker("claimAndHang.cjs", [stateDir]);
    const { pid } = JSON.parse(await firstLine(worker));
    worker.kill("SIGKILL");
    await waitForExit(worker);
    await eventually(() => (tracker.get("orphan")?.state === "queued" ? true : undefined));
    expect(tracker.get("orphan")?.transitions?.at(-1)).toMatchObject({ by: "monitor", reason: `released: the worker's pid ${pid} is gone (attempt 1 of 3)` });
    monitor.stop();
  });

  it("a failure changes the attempt count and the state in one write, once", () => {
    const { tracker } = queued(["flaky"]);
    const claim = tracker.claimNext()!;
    const before = tracker.get("flaky")!;

    const first = tracker.fail("flaky", claim.token, "timeout talking to the model");
    const again = tracker.fail("flaky", claim.token, "timeout talking to the model");

    expect(first.request.version).toBe(before.version! + 1);
    expect(first.request).toMatchObject({ state: "queued", attempt: 1 });
    // The attempt's error is in its step of the history, written in the same write.
    expect(first.request.transitions?.at(-1)).toMatchObject({ from: "processing", to: "queued", error: "timeout talking to the model" });
    expect(again.outcome).toBe("duplicate");
    expect(tracker.get("flaky")?.version).toBe(first.request.version);
  });
});
