import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { runCli } from "../helpers/cli";
import { firstLine, startWorker, waitForExit } from "../helpers/processes";
import { aRecording, aTracker, tempForeignDir, tempStateDir } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";
import { isReqwatchError } from "../../lib/model/errors";
import { queuesView } from "../../lib/views/queuesView";

describe("pausing a workspace's queue", () => {
  it("claims take nothing from a paused workspace, named or not; the others go on; resume and it is claimed again", () => {
    const { tracker, reader, operator } = aRecording({ stateDir: tempStateDir() });
    tracker.create({ requestId: "paused-1", workspace: "batch", state: "queued" });
    tracker.create({ requestId: "other-1", workspace: "chat", state: "queued" });
    tracker.create({ requestId: "paused-2", workspace: "batch", state: "queued" });

    const outcome = operator.pause("batch", { by: "test", reason: "provider down" });
    expect(outcome).toMatchObject({ changed: true, pause: { workspace: "batch", by: "test", reason: "provider down" } });
    expect(operator.pause("batch").changed).toBe(false);

    expect(tracker.claimNext({ workspace: "batch" })).toBeNull();
    expect(tracker.claimNext()?.request.requestId).toBe("other-1");
    expect(tracker.claimNext()).toBeNull();
    expect(reader.countsByState()).toMatchObject({ queued: 2, processing: 1 });

    expect(operator.resume("batch")).toBe(true);
    expect(operator.resume("batch")).toBe(false);
    expect(tracker.claimNext()?.request.requestId).toBe("paused-1");
    expect(tracker.claimNext({ workspace: "batch" })?.request.requestId).toBe("paused-2");
  });

  it("while one is paused, claims take the others' requests oldest first across workspaces, backed-off ones when due", () => {
    let now = Date.now();
    const { tracker, operator } = aRecording({ stateDir: tempStateDir(), now: () => now });
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      for (const workspace of ["alpha", "batch", "chat"]) {
        tracker.create({ requestId: `${workspace}-${i}`, workspace, state: "queued" });
        order.push(`${workspace}-${i}`);
        now += 10;
      }
    }
    tracker.update("alpha-1", { fields: { notBefore: now + 60_000 } });
    operator.pause("batch");
    const claimed: string[] = [];
    for (let claim = tracker.claimNext(); claim; claim = tracker.claimNext()) claimed.push(claim.request.requestId);
    expect(claimed).toEqual(order.filter((id) => !id.startsWith("batch") && id !== "alpha-1"));
    now += 60_000;
    expect(tracker.claimNext()?.request.requestId).toBe("alpha-1");
    expect(tracker.claimNext()).toBeNull();
  });

  it("a pause that returns while a claim is being written holds for that claim", () => {
    const stateDir = tempStateDir();
    const worker = aTracker({ stateDir });
    const person = aRecording({ stateDir }).operator;
    worker.create({ requestId: "r1", workspace: "batch", state: "queued" });
    // The claim has decided and is syncing its temp file (outside the lock) when the pause comes and returns.
    const fsync = fs.fsyncSync;
    let pausedMidClaim = false;
    const spy = vi.spyOn(fs, "fsyncSync").mockImplementation((fd) => {
      fsync(fd);
      if (pausedMidClaim) return;
      pausedMidClaim = true;
      person.pause("batch");
    });
    try {
      expect(worker.claimNext()).toBeNull();
    } finally {
      spy.mockRestore();
    }
    expect(pausedMidClaim).toBe(true);
    expect(worker.get("r1")?.state).toBe("queued");
  });

  it("work claimed before the pause finishes; the pause is in the audit log and the feed", () => {
    const { tracker, reader, operator } = aRecording({ stateDir: tempStateDir() });
    tracker.create({ requestId: "running", workspace: "batch", state: "queued" });
    const claim = tracker.claimNext()!;
    const before = reader.feedLastSeq();
    operator.pause("batch", { by: "dashboard" });
    expect(tracker.complete("running", claim.token, { fields: { output: "ok" } }).outcome).toBe("applied");
    operator.resume("batch", { by: "cli" });

    expect(
      reader
        .changesSince(before)
        .filter((change) => change.kind === "queue.changed")
        .map((change) => change.requestId),
    ).toEqual(["batch", "batch"]);
    const [resumed, paused] = operator.actions.list(2);
    expect(paused).toMatchObject({
      kind: "pause",
      by: "dashboard",
      status: "done",
      summary: "Pause workspace batch",
      target: { workspace: "batch", reason: null },
    });
    expect(resumed).toMatchObject({ kind: "resume", by: "cli", status: "done", summary: "Resume workspace batch" });
  });

  it("survives a restart and a lost index: the pause is a file in the state folder", () => {
    const stateDir = tempStateDir();
    const first = aRecording({ stateDir });
    first.tracker.create({ requestId: "waiting", workspace: "batch", state: "queued" });
    first.operator.pause("batch", { reason: "maintenance" });
    first.close();
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, "paused", "batch.json"), "utf8"))).toMatchObject({
      workspace: "batch",
      reason: "maintenance",
      by: "library",
    });

    fs.rmSync(path.join(stateDir, "index.db"));
    const { tracker: reopened, reader, operator } = aRecording({ stateDir });
    expect(reader.pauses()).toMatchObject([{ workspace: "batch", reason: "maintenance" }]);
    expect(reopened.claimNext()).toBeNull();
    operator.resume("batch");
    expect(reopened.claimNext()?.request.requestId).toBe("waiting");
  });

  it("a paused queue's wait is not stuck; resumed, it is", () => {
    let now = Date.now();
    const { tracker, reader, operator } = aRecording({ stateDir: tempStateDir(), queuedStuckAfterMs: 60_000, now: () => now });
    tracker.create({ requestId: "waiting", workspace: "batch", state: "queued" });
    now += 120_000;
    expect(reader.stuck().map((entry) => entry.requestId)).toEqual(["waiting"]);
    operator.pause("batch");
    expect(reader.stuck()).toEqual([]);
    expect(operator.monitorPass().stuck).toEqual([]);
    expect(queuesView(reader, reader.stuck())).toMatchObject([
      { workspace: "batch", queued: 1, stuck: 0, stuckCauses: [], status: "paused", paused: { workspace: "batch" } },
    ]);
    operator.resume("batch");
    expect(operator.monitorPass().stuck.map((entry) => entry.requestId)).toEqual(["waiting"]);
    expect(queuesView(reader, reader.stuck())).toMatchObject([
      { workspace: "batch", queued: 1, stuck: 1, stuckCauses: ["waited too long"], status: "stuck", paused: null },
    ]);
  });

  it("a pause file that cannot be read still pauses its workspace, and says so", () => {
    const stateDir = tempStateDir();
    const { tracker, reader, operator } = aRecording({ stateDir });
    tracker.create({ requestId: "waiting", workspace: "batch", state: "queued" });
    fs.mkdirSync(path.join(stateDir, "paused"));
    fs.writeFileSync(path.join(stateDir, "paused", "batch.json"), "{ torn");
    expect(tracker.claimNext()).toBeNull();
    expect(reader.pauses()).toEqual([
      { workspace: "batch", pausedAt: null, by: null, reason: "its pause file cannot be read; resume the workspace to remove it" },
    ]);
    expect(operator.resume("batch")).toBe(true);
    expect(tracker.claimNext()?.request.requestId).toBe("waiting");
  });

  it("is refused in a folder reqwatch only observes, and for a name that is no workspace; nothing changes", () => {
    const foreign = tempForeignDir();
    writeRequestFile(foreign, aRequest({ requestId: "theirs", state: "queued" }));
    const before = treeSnapshot(foreign);
    const observer = aRecording({ stateDir: foreign }).operator;
    for (const act of [() => observer.pause("batch"), () => observer.resume("batch")]) {
      let error: unknown;
      try {
        act();
      } catch (caught) {
        error = caught;
      }
      expect(isReqwatchError(error, "READ_ONLY"), String(error)).toBe(true);
    }
    expect(treeSnapshot(foreign)).toEqual(before);

    const { reader, operator } = aRecording({ stateDir: tempStateDir() });
    expect(() => operator.pause("../etc")).toThrow(/Invalid workspace/);
    expect(reader.pauses()).toEqual([]);
  });

  it("from the CLI, a worker in another process takes nothing from the paused workspace; after resume it drains it", async () => {
    const stateDir = tempStateDir();
    const { tracker, reader } = aRecording({ stateDir });
    for (let i = 0; i < 20; i++) {
      tracker.create({ requestId: `batch-${i}`, workspace: "batch", state: "queued" });
      tracker.create({ requestId: `chat-${i}`, workspace: "chat", state: "queued" });
    }
    expect(runCli(["pause", "batch", "--reason", "provider down"], { stateDir })).toMatchObject({
      code: 0,
      stdout: "Paused batch: workers take nothing from it until `reqwatch resume batch`.\n",
    });
    expect(runCli(["pause", "batch"], { stateDir }).stdout).toMatch(/^batch was already paused since \d{4}-/);
    const queues = runCli(["queues"], { stateDir }).stdout.split("\n");
    expect(queues[0]).toMatch(/^WORKSPACE\s+QUEUED\s+PROCESSING\s+OLDEST WAIT\s+STATUS$/);
    expect(queues[1]).toMatch(/^batch\s+20\s+0\s+\S+\s+paused by cli: provider down$/);
    expect(queues[2]).toMatch(/^chat\s+20\s+0\s+\S+\s+waiting$/);

    const drain = async () => {
      const worker = startWorker("drainQueue.cjs", [stateDir, "2"]);
      const stats = JSON.parse(await firstLine(worker)) as { completed: number; errors: number };
      expect(await waitForExit(worker)).toBe(0);
      return stats;
    };
    expect(await drain()).toMatchObject({ completed: 20, errors: 0 });
    expect(reader.countsByState({ workspace: "batch" })).toMatchObject({ queued: 20, completed: 0 });

    expect(runCli(["resume", "batch"], { stateDir })).toMatchObject({ code: 0, stdout: "Resumed batch.\n" });
    expect(runCli(["resume", "batch"], { stateDir }).stdout).toBe("batch is not paused.\n");
    expect(await drain()).toMatchObject({ completed: 20, errors: 0 });
    expect(reader.countsByState()).toMatchObject({ queued: 0, completed: 40 });
    expect(runCli(["pause", "a/b"], { stateDir })).toMatchObject({ code: 1, stderr: expect.stringMatching(/^reqwatch: Invalid workspace: "a\/b"/) });
  }, 60_000);

  it("a workspace named with a leading dash gets a resume hint that works when pasted", () => {
    const stateDir = tempStateDir();
    const paused = runCli(["pause", "--", "-x"], { stateDir });
    expect(paused).toMatchObject({ code: 0, stdout: "Paused -x: workers take nothing from it until `reqwatch resume -- -x`.\n" });
    const hint = /`reqwatch (.*)`/.exec(paused.stdout)![1]!.split(" ");
    expect(runCli(hint, { stateDir })).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Resumed -x/) });
  });
});
