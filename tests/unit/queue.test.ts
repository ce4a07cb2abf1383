import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { TimeoutError } from "../../lib/model/errors";
import { currentProcess, processStartedAt } from "../../lib/process/liveness";
import { backoffDelay } from "../../lib/queue/backoff";
import { aClaimedRequest, aRequest, writeRequestFile } from "../helpers/builders";
import { aClock } from "../helpers/clock";
import { aDeadPid } from "../helpers/processes";
import { aRecording, aTracker, readRaw, tempStateDir } from "../helpers/stateDir";

const MINUTE = 60_000;

function queueOf(ids: string[], clock = aClock()) {
  const stateDir = tempStateDir();
  const recording = aRecording({ stateDir, now: clock.now, random: () => 0 });
  for (const requestId of ids) {
    clock.advance(10);
    recording.tracker.create({ requestId, workspace: requestId.startsWith("b") ? "beta" : "alpha", state: "queued" });
  }
  clock.advance(10);
  return { stateDir, ...recording, clock };
}

describe("claimNext", () => {
  it("claims the oldest ready queued request and records who holds it", () => {
    const { tracker, clock } = queueOf(["a1", "a2", "b1"]);
    const claim = tracker.claimNext({ worker: "worker-A" })!;
    const me = currentProcess();

    expect(claim.request.requestId).toBe("a1");
    expect(claim.request.state).toBe("processing");
    expect(claim.request.attempt).toBe(1);
    expect(claim.request.claim).toEqual({
      token: claim.token,
      pid: process.pid,
      host: os.hostname(),
      processStartedAt: me.processStartedAt,
      claimedAt: clock.now(),
      heartbeatAt: clock.now(),
    });
    expect(me.processStartedAt).toBe(processStartedAt(process.pid));
    expect(claim.request.transitions?.at(-1)).toMatchObject({ from: "queued", to: "processing", reason: "claimed", by: "worker-A", token: claim.token });
    expect(tracker.claimNext()!.request.requestId).toBe("a2");
    expect(tracker.claimNext({ workspace: "alpha" })).toBeNull();
    expect(tracker.claimNext({ workspace: "beta" })!.request.requestId).toBe("b1");
    expect(tracker.claimNext()).toBeNull();
  });

  it("respects a retry's back-off", () => {
    const { tracker, clock } = queueOf(["r1"]);
    const first = tracker.claimNext()!;
    tracker.fail("r1", first.token, "flaky", { retryable: true });
    expect(tracker.claimNext()).toBeNull();
    clock.advance(999);
    expect(tracker.claimNext()).toBeNull();
    clock.advance(1);
    expect(tracker.claimNext()?.request.attempt).toBe(2);
  });
});

describe("complete and fail: the token fence", () => {
  it("applies a result with the current token, ignores a duplicate, and drops a late one", () => {
    const { stateDir, tracker } = queueOf(["r1"]);
    const claim = tracker.claimNext()!;

    const applied = tracker.complete("r1", claim.token, { output: "done", tokens: 5 });
    expect(applied.outcome).toBe("applied");
    expect(applied.request).toMatchObject({ state: "completed", output: "done", tokens: 5, claim: null });

    const before = readRaw(stateDir, "r1");
    expect(tracker.complete("r1", claim.token, { output: "again" }).outcome).toBe("duplicate");
    expect(readRaw(stateDir, "r1")).toBe(before);

    const late = tracker.complete("r1", "some-old-token", { output: "late" });
    expect(late.outcome).toBe("dropped");
    expect(late.reason).toBe("late completion dropped: the request is already completed");
    expect(late.request.output).toBe("done");
    expect(late.request.transitions?.at(-1)).toMatchObject({ from: "completed", to: "completed", dropped: true, token: "some-old-token" });
  });

  it("drops the result of a worker whose claim was released and taken by another", () => {
    const { tracker } = queueOf(["r1"]);
    const first = tracker.claimNext()!;
    tracker.update("r1", { to: "queued", reason: "released by hand" });
    const second = tracker.claimNext()!;

    const late = tracker.complete("r1", first.token, { output: "stale" });
    expect(late.outcome).toBe("dropped");
    expect(late.reason).toMatch(/claimed again by another worker/);
    expect(tracker.get("r1")).toMatchObject({ state: "processing", claim: { token: second.token } });
    expect(tracker.complete("r1", second.token, { output: "fresh" }).request.output).toBe("fresh");
  });

  it("requeues a retryable failure with back-off and counts the attempt in the same write", () => {
    const { tracker, clock } = queueOf(["r1"]);
    const claim = tracker.claimNext()!;
    const versionBefore = claim.request.version!;

    const delivery = tracker.fail("r1", claim.token, "rate limited");

    expect(delivery.outcome).toBe("applied");
    expect(delivery.request).toMatchObject({ state: "queued", attempt: 1, notBefore: clock.now() + 1000, version: versionBefore + 1 });
    // The error is the attempt's: in its step of the history, not on the request that waits for the next one.
    expect(delivery.request.error).toBeUndefined();
    expect(delivery.request.transitions?.at(-1)).toMatchObject({ from: "processing", to: "queued", error: "rate limited", token: claim.token });
    expect(delivery.reason).toBe("retryable failure (attempt 1 of 3); next attempt in 1s");
    expect(tracker.fail("r1", claim.token, "rate limited").outcome).toBe("duplicate");
  });

  it("a request that succeeds on a later attempt carries no error; each earlier attempt's error stays in its step", () => {
    const { tracker, clock } = queueOf(["r1"]);
    for (const error of ["rate limited", "upstream 503"]) {
      clock.advance(10 * MINUTE);
      tracker.fail("r1", tracker.claimNext()!.token, error);
    }
    clock.advance(10 * MINUTE);
    const done = tracker.complete("r1", tracker.claimNext()!.token, { output: "ok" }).request;
    expect(done).toMatchObject({ state: "completed", attempt: 3, output: "ok" });
    expect(done.error).toBeUndefined();
    expect(done.transitions?.filter((t) => t.error).map((t) => t.error)).toEqual(["rate limited", "upstream 503"]);
  });

  it("a person's retry of a failed request moves its error into the retry's step; the new attempt's completion shows none", () => {
    const { tracker, operator } = queueOf(["r1"]);
    tracker.fail("r1", tracker.claimNext()!.token, "bad prompt", { retryable: false });
    expect(tracker.get("r1")).toMatchObject({ state: "failed", error: "bad prompt" });
    operator.retry({ ids: ["r1"] }, { by: "dashboard" });
    expect(tracker.get("r1")?.error).toBeUndefined();
    expect(tracker.get("r1")?.transitions?.at(-1)).toMatchObject({ from: "failed", to: "queued", error: "bad prompt", by: "dashboard" });
    tracker.complete("r1", tracker.claimNext()!.token, { output: "fixed" });
    expect(tracker.get("r1")?.error).toBeUndefined();
  });

  it("fails for good after maxAttempts, or at once when not retryable", () => {
    const { tracker, clock } = queueOf(["r1"]);
    for (let attempt = 1; attempt <= 3; attempt++) {
      clock.advance(10 * MINUTE);
      const claim = tracker.claimNext()!;
      expect(claim.request).toMatchObject({ requestId: "r1", attempt });
      tracker.fail("r1", claim.token, `boom ${attempt}`);
    }
    expect(tracker.get("r1")).toMatchObject({ state: "failed", attempt: 3, error: "boom 3" });
    expect(tracker.get("r1")?.transitions?.at(-1)?.reason).toBe("failed on attempt 3 of 3: no attempts left");

    tracker.create({ requestId: "r2", workspace: "alpha", state: "queued" });
    const claim = tracker.claimNext()!;
    expect(tracker.fail("r2", claim.token, "bad input", { retryable: false }).request).toMatchObject({ state: "failed", attempt: 1 });
  });

  it("takes a request's own maxAttempts over the tracker's", () => {
    const clock = aClock();
    const tracker = aTracker({ now: clock.now, random: () => 0 });
    tracker.create({ requestId: "once", workspace: "w", state: "queued", maxAttempts: 1 });
    const claim = tracker.claimNext()!;
    expect(tracker.fail("once", claim.token, "x").request.state).toBe("failed");
  });

  it("heartbeats renew a current claim and refuse a stale one", () => {
    const { tracker, clock, reader } = queueOf(["r1"]);
    const claim = tracker.claimNext()!;
    clock.advance(4 * MINUTE);
    expect(tracker.heartbeat("r1", claim.token)).toBe(true);
    clock.advance(4 * MINUTE);
    // Silent for 4 minutes after the beat, not 8 since the claim: not a candidate.
    expect(reader.stuck()).toEqual([]);
    expect(tracker.heartbeat("r1", "not-the-token")).toBe(false);
    tracker.complete("r1", claim.token);
    expect(tracker.heartbeat("r1", claim.token)).toBe(false);
  });
});

describe("back-off", () => {
  it("doubles from the base up to the cap, less up to the jitter", () => {
    const options = { baseMs: 1000, capMs: 10_000, jitter: 0.5 };
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(attempt, options, () => 0))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(backoffDelay(3, options, () => 1)).toBe(2000);
    expect(backoffDelay(3, { ...options, jitter: 0 }, () => 1)).toBe(4000);
  });
});

describe("manual retry", () => {
  function mixed() {
    const stateDir = tempStateDir();
    const now = Date.now();
    writeRequestFile(stateDir, aRequest({ requestId: "failed-1", state: "failed", attempt: 3 }));
    writeRequestFile(stateDir, aRequest({ requestId: "timeout-1", state: "timeout", timedOut: true }));
    writeRequestFile(stateDir, aRequest({ requestId: "done-1", state: "completed" }));
    writeRequestFile(stateDir, aClaimedRequest("orphan", { token: "t-dead", pid: aDeadPid(), claimedAt: now - 1000, heartbeatAt: now - 1000 }));
    const me = currentProcess();
    writeRequestFile(
      stateDir,
      aClaimedRequest("held", {
        token: "t-live",
        pid: me.pid,
        host: me.host,
        processStartedAt: me.processStartedAt ?? undefined,
        claimedAt: now - 1000,
        heartbeatAt: now - 1000,
      }),
    );
    return { stateDir, ...aRecording({ stateDir }) };
  }

  it("in a dry run reports exactly what the real run then does", () => {
    const { operator } = mixed();

    const dryRun = operator.retry({ ids: ["failed-1", "timeout-1", "done-1", "orphan", "held", "ghost"] }, { dryRun: true });
    const real = operator.retry({ ids: ["failed-1", "timeout-1", "done-1", "orphan", "held", "ghost"] }, { dryRun: false });

    expect(dryRun.dryRun).toBe(true);
    expect({ ...dryRun, dryRun: false }).toEqual(real);
    expect(dryRun.retried.map((r) => r.requestId)).toEqual(["failed-1", "timeout-1", "orphan"]);
    expect(dryRun.skipped).toEqual([
      { requestId: "done-1", state: "completed", reason: "it is completed: nothing to retry" },
      { requestId: "held", state: "processing", reason: `a live worker (pid ${process.pid}) holds it` },
      { requestId: "ghost", state: null, reason: "it does not exist" },
    ]);
  });

  it("requeues failed, timed-out and orphaned requests, marked manual, even past maxAttempts", () => {
    const { tracker, operator } = mixed();
    operator.retry({ filter: { states: ["failed", "timeout", "processing"] } }, { by: "dashboard" });
    expect(tracker.get("failed-1")).toMatchObject({ state: "queued", attempt: 3 });
    expect(tracker.get("failed-1")?.transitions?.at(-1)).toMatchObject({
      to: "queued",
      manual: true,
      by: "dashboard",
      reason: "manual retry of a failed request",
    });
    expect(tracker.get("orphan")?.transitions?.at(-1)?.reason).toMatch(/^manual retry: the worker \(pid \d+\) is gone$/);
    expect(tracker.get("held")?.state).toBe("processing");
    const claims = [tracker.claimNext(), tracker.claimNext(), tracker.claimNext()];
    expect(claims.find((claim) => claim?.request.requestId === "failed-1")?.request.attempt).toBe(4);
  });

  it("dry run leaves every file as it was", () => {
    const { stateDir, operator } = mixed();
    const snapshot = () =>
      fs
        .readdirSync(path.join(stateDir, "requests"))
        .sort()
        .map((name) => fs.readFileSync(path.join(stateDir, "requests", name), "utf8"));
    const before = snapshot();
    operator.retry({ filter: {} }, { dryRun: true });
    expect(snapshot()).toEqual(before);
  });
});

describe("waitForResult", () => {
  it("resolves when the request finishes, and at once when it already has", async () => {
    const { tracker, upkeep } = queueOf(["r1"]);
    const claim = tracker.claimNext()!;
    const waiting = tracker.waitForResult("r1", { timeoutMs: 5000 });
    // On a later turn of the event loop: after the wait has begun, whatever the machine's pace.
    setImmediate(() => tracker.complete("r1", claim.token, { output: "ok" }));
    expect((await waiting).output).toBe("ok");
    expect((await tracker.waitForResult("r1", { timeoutMs: 1 })).state).toBe("completed");
    expect(upkeep.pendingWaits()).toBe(0);
  });

  it("rejects with a TimeoutError and forgets the waiter; a later result resolves nothing", async () => {
    const { tracker, upkeep } = queueOf(["r1"]);
    const claim = tracker.claimNext()!;
    const outcome = tracker.waitForResult("r1", { timeoutMs: 30 }).then(
      (request) => request,
      (error: unknown) => error,
    );
    expect(await outcome).toBeInstanceOf(TimeoutError);
    expect(upkeep.pendingWaits()).toBe(0);
    expect(tracker.complete("r1", claim.token)).toMatchObject({ outcome: "applied", request: { requestId: "r1", state: "completed" } });
    // Nothing was left waiting for it: the result is on disk, and a new wait gets it at once.
    expect(upkeep.pendingWaits()).toBe(0);
    expect(await outcome).toBeInstanceOf(TimeoutError);
    await expect(tracker.waitForResult("r1", { timeoutMs: 1 })).resolves.toMatchObject({ requestId: "r1", state: "completed" });
    expect(upkeep.pendingWaits()).toBe(0);
  });

  it("leaves no waiter behind after 10,000 waits that time out", async () => {
    const { tracker, upkeep } = queueOf(["r1", "r2"]);
    const waits = Array.from({ length: 10_000 }, (_, i) => tracker.waitForResult(i % 2 ? "r1" : "r2", { timeoutMs: 20 + (i % 50) }).catch((error) => error));
    expect(upkeep.pendingWaits()).toBe(10_000);
    const settled = await Promise.all(waits);
    expect(settled.every((error) => error instanceof TimeoutError)).toBe(true);
    expect(upkeep.pendingWaits()).toBe(0);
  });
});
