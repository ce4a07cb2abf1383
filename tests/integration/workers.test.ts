import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { aClaimedRequest, aRequest, writeRequestFile } from "../helpers/builders";
import { aDeadPid, firstLine, startWorker, waitForExit } from "../helpers/processes";
import { aRecording, tempStateDir } from "../helpers/stateDir";
import { workersView } from "../../lib/views/workersView";

const HOUR = 3_600_000;

describe("the workers seen in the claims", () => {
  it("counts what each worker process did and holds, knows a gone one and what it left, and comes back the same after a rebuild", () => {
    const stateDir = tempStateDir();
    const now = Date.now();
    const dead = aDeadPid();
    // A worker that died holding a request (a file from before claims recorded their worker: the current claim names it).
    writeRequestFile(
      stateDir,
      aClaimedRequest("orphan", { token: "t-dead", pid: dead, host: os.hostname(), claimedAt: now - 600_000, heartbeatAt: now - 600_000 }, { workspace: "gw" }),
    );
    // A claim known by name only: finished long ago, its claim gone, no worker recorded.
    writeRequestFile(
      stateDir,
      aRequest({
        requestId: "old",
        state: "completed",
        transitions: [
          { from: null, to: "created", at: now - 3 * HOUR },
          { from: "created", to: "queued", at: now - 3 * HOUR },
          { from: "queued", to: "processing", at: now - 2 * HOUR, token: "t-old", by: "nightly-runner" },
          { from: "processing", to: "completed", at: now - 2 * HOUR + 5000, token: "t-old" },
        ],
      }),
    );
    const { tracker, reader } = aRecording({ stateDir });
    for (const id of ["a", "b", "c"]) tracker.create({ requestId: id, workspace: "gw", state: "queued" });
    const first = tracker.claimNext({ worker: "me" })!;
    tracker.complete(first.request.requestId, first.token, { fields: { output: "ok" } });
    const second = tracker.claimNext({ worker: "me" })!;
    tracker.fail(second.request.requestId, second.token, "rate limited", { retryable: true });
    tracker.claimNext({ worker: "me" });

    const expected = () => {
      const view = workersView(reader, now);
      const me = view.find((worker) => worker.pid === process.pid)!;
      const gone = view.find((worker) => worker.pid === dead)!;
      const named = view.find((worker) => worker.pid === null)!;
      return { me, gone, named, count: view.length };
    };
    const { me, gone, named, count } = expected();
    expect(count).toBe(3);
    // a completed; b failed (its own failure, to be retried); then b or c claimed and running.
    expect(me).toMatchObject({
      name: "me",
      host: os.hostname(),
      liveness: "alive",
      completed: 1,
      failed: 1,
      released: 0,
      running: 1,
      holding: 1,
      unfinished: [],
    });
    expect(me.how).toMatch(new RegExp(`^process ${process.pid} runs on this host`));
    expect(gone).toMatchObject({
      liveness: "gone",
      status: "gone",
      holding: 1,
      running: 1,
      completed: 0,
      unfinished: [{ requestId: "orphan", outcome: null }],
    });
    expect(gone.how).toMatch(/^no process \d+ with its start time on this host/);
    expect(named).toMatchObject({ name: "nightly-runner", host: null, completed: 1, liveness: "unknown" });

    tracker.close();
    fs.rmSync(path.join(stateDir, "index.db"));
    const rebuilt = aRecording({ stateDir }).reader;
    const again = workersView(rebuilt, now);
    expect(
      again
        .map(({ pid, name, completed, failed, released, running, holding }) => ({ pid, name, completed, failed, released, running, holding }))
        .sort((x, y) => String(x.name).localeCompare(String(y.name))),
    ).toEqual(
      [me, gone, named]
        .map(({ pid, name, completed, failed, released, running, holding }) => ({ pid, name, completed, failed, released, running, holding }))
        .sort((x, y) => String(x.name).localeCompare(String(y.name))),
    );
  });

  it("two worker processes draining a queue: each is a worker, and their completions add up", async () => {
    const stateDir = tempStateDir();
    const { tracker, reader } = aRecording({ stateDir });
    for (let i = 0; i < 60; i++) tracker.create({ requestId: `job-${i}`, workspace: "drain", state: "queued" });
    const workers = [startWorker("drainQueue.cjs", [stateDir]), startWorker("drainQueue.cjs", [stateDir])];
    const lines = workers.map((worker) => firstLine(worker));
    await Promise.all(workers.map(waitForExit));
    const stats = (await Promise.all(lines)).map((line) => JSON.parse(line) as { completed: number });

    const seen = workersView(reader).filter((worker) => worker.name?.startsWith("drain "));
    expect(seen.map((worker) => worker.pid).sort()).toEqual(workers.map((worker) => worker.pid).sort());
    expect(seen.map((worker) => worker.completed).sort()).toEqual(stats.map((s) => s.completed).sort());
    // They ran out of work and exited, leaving nothing: not a crash.
    expect(seen.every((worker) => worker.liveness === "gone" && worker.status === "exited" && worker.holding === 0 && worker.unfinished.length === 0)).toBe(
      true,
    );
  }, 60_000);
});

describe("how an attempt ended, and by whom", () => {
  it("tells a worker's own failure from the monitor's release and a person's cancel", async () => {
    const { attemptsOf } = await import("../../lib/model/attempts");
    const at = 1;
    const ends = attemptsOf([
      { from: "queued", to: "processing", at, token: "t1" },
      { from: "processing", to: "queued", at, token: "t1", error: "rate limited" },
      { from: "queued", to: "processing", at, token: "t2" },
      { from: "processing", to: "queued", at, token: "t2", by: "monitor", reason: "released: worker 7 gone (attempt 2 of 3)" },
      { from: "queued", to: "processing", at, token: "t3" },
      { from: "processing", to: "completed", at, token: "t2", dropped: true },
      { from: "processing", to: "failed", at, token: "t3", manual: true, reason: "cancelled" },
      { from: "failed", to: "queued", at, manual: true },
      { from: "queued", to: "processing", at, token: "t4" },
      { from: "processing", to: "timeout", at, token: "t4", by: "monitor", reason: "past its deadline" },
      { from: "timeout", to: "queued", at, manual: true },
      { from: "queued", to: "processing", at, token: "t5" },
      { from: "processing", to: "completed", at, token: "t5" },
    ]).map((attempt) => attempt.ended?.how);
    expect(ends).toEqual(["failed", "released", "stopped", "timed out", "completed"]);
  });
});
