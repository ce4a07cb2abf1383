import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { STUCK_ROWS } from "../../lib/db/queries/stuckRows";
import { currentProcess } from "../../lib/process/liveness";
import { aClaimedRequest, aRequest, writeRequestFile, type ClaimShape } from "../helpers/builders";
import { aClock } from "../helpers/clock";
import { aDeadPid } from "../helpers/processes";
import { aRecording, readRaw, tempStateDir } from "../helpers/stateDir";

const MINUTE = 60_000;

function claimWithoutHeartbeat(overrides: Partial<ClaimShape> = {}, now = Date.now()): ClaimShape {
  const long = now - 10 * MINUTE;
  return { token: "tok", pid: aDeadPid(), claimedAt: long, heartbeatAt: long, ...overrides };
}

function liveClaim(overrides: Partial<ClaimShape> = {}, now = Date.now()): ClaimShape {
  const me = currentProcess();
  return claimWithoutHeartbeat({ pid: me.pid, host: me.host, processStartedAt: me.processStartedAt ?? undefined, ...overrides }, now);
}

describe("the stuck monitor", () => {
  it("flags a request queued past its threshold and does nothing else", () => {
    const stateDir = tempStateDir();
    // On a clock of its own: the reason's figures are exact however long the open takes.
    const clock = aClock();
    writeRequestFile(
      stateDir,
      aRequest({ requestId: "waiting", state: "queued", queuedAt: clock.now() - 11 * MINUTE, lastUpdatedAt: clock.now() - 11 * MINUTE }),
    );
    writeRequestFile(stateDir, aRequest({ requestId: "fresh", state: "queued", queuedAt: clock.now() - MINUTE, lastUpdatedAt: clock.now() - MINUTE }));
    const { reader, operator } = aRecording({ stateDir, now: clock.now });
    const before = readRaw(stateDir, "waiting");

    const pass = operator.monitorPass();

    expect(pass.counts).toMatchObject({ stuckQueued: 1, released: 0 });
    expect(pass.stuck).toEqual([
      {
        requestId: "waiting",
        workspace: "ws",
        state: "queued",
        since: expect.any(Number),
        cause: "waited too long",
        reason: "queued 11m; no reqwatch worker has claimed from workspace ws in 10m (last claim: never)",
      },
    ]);
    expect(readRaw(stateDir, "waiting")).toBe(before);
    expect(reader.stuck()).toEqual(pass.stuck);
  });

  it("times out a request past its deadline", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aClaimedRequest("late", liveClaim({ heartbeatAt: Date.now() }), { timeoutAt: Date.now() - 1000 }));
    const { tracker, operator } = aRecording({ stateDir });
    expect(operator.monitorPass().counts.deadlineTimedOut).toBe(1);
    expect(tracker.get("late")).toMatchObject({ state: "timeout", timedOut: true, claim: null });
    expect(tracker.get("late")?.transitions?.at(-1)?.reason).toMatch(/^past its deadline/);
  });

  it("applies the result marker of a worker without a heartbeat instead of running the request again", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aClaimedRequest("finished", claimWithoutHeartbeat()));
    fs.mkdirSync(path.join(stateDir, "results"), { recursive: true });
    fs.writeFileSync(
      path.join(stateDir, "results", "finished.json"),
      JSON.stringify({ requestId: "finished", token: "tok", outcome: "completed", fields: { output: "42" }, writtenAt: Date.now() }),
    );
    const { tracker, operator } = aRecording({ stateDir });

    expect(operator.monitorPass().counts).toMatchObject({ resultsApplied: 1, released: 0 });
    expect(tracker.get("finished")).toMatchObject({ state: "completed", output: "42" });
    expect(tracker.get("finished")?.transitions?.at(-1)).toMatchObject({
      by: "monitor",
      reason: "result marker found: the worker finished but did not report",
      token: "tok",
    });
    expect(fs.existsSync(path.join(stateDir, "results", "finished.json"))).toBe(false);
  });

  it("ignores a marker written under another claim", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aClaimedRequest("other", claimWithoutHeartbeat()));
    fs.mkdirSync(path.join(stateDir, "results"), { recursive: true });
    fs.writeFileSync(
      path.join(stateDir, "results", "other.json"),
      JSON.stringify({ requestId: "other", token: "older-claim", outcome: "completed", writtenAt: Date.now() }),
    );
    const { tracker, operator } = aRecording({ stateDir });
    expect(operator.monitorPass().counts).toMatchObject({ resultsApplied: 0, released: 1 });
    expect(tracker.get("other")?.state).toBe("queued");
  });

  it("leaves a request without a heartbeat alone while its worker process is alive, and flags it", () => {
    const stateDir = tempStateDir();
    const clock = aClock();
    writeRequestFile(stateDir, aClaimedRequest("slow", liveClaim({}, clock.now())));
    const { tracker, operator } = aRecording({ stateDir, now: clock.now });
    const pass = operator.monitorPass();
    expect(pass.counts).toMatchObject({ stuckAlive: 1, released: 0 });
    expect(pass.stuck[0]).toMatchObject({
      cause: "no heartbeat",
      reason: expect.stringMatching(new RegExp(`^processing 10m, worker ${process.pid} alive, no heartbeat for 10m$`)),
    });
    expect(tracker.get("slow")?.state).toBe("processing");
  });

  it("does not take a recycled pid for the live worker", () => {
    const stateDir = tempStateDir();
    // Our own pid, but a process that started at another time: the claiming worker is gone.
    writeRequestFile(stateDir, aClaimedRequest("recycled", liveClaim({ processStartedAt: (currentProcess().processStartedAt ?? 0) - 3_600_000 })));
    const { tracker, operator } = aRecording({ stateDir });
    expect(operator.monitorPass().counts.released).toBe(1);
    expect(tracker.get("recycled")?.transitions?.at(-1)?.reason).toBe(`released: the worker's pid ${process.pid} is gone (attempt 1 of 3)`);
  });

  it("releases a gone worker's request while attempts remain, else times it out", () => {
    const stateDir = tempStateDir();
    const pid = aDeadPid();
    writeRequestFile(stateDir, aClaimedRequest("again", claimWithoutHeartbeat({ pid })));
    writeRequestFile(stateDir, aClaimedRequest("last-try", claimWithoutHeartbeat({ pid, token: "tok2" }), { attempt: 3 }));
    const { tracker, operator } = aRecording({ stateDir });

    const pass = operator.monitorPass();

    expect(pass.counts).toMatchObject({ released: 1, timedOut: 1 });
    expect(tracker.get("again")).toMatchObject({ state: "queued", claim: null });
    expect(tracker.get("again")?.transitions?.at(-1)).toMatchObject({
      by: "monitor",
      reason: `released: the worker's pid ${pid} is gone (attempt 1 of 3)`,
      token: "tok",
    });
    expect(tracker.get("last-try")).toMatchObject({ state: "timeout" });
    expect(tracker.get("last-try")?.transitions?.at(-1)?.reason).toBe(`the worker's pid ${pid} is gone; no attempts left (3 of 3)`);
    expect(pass.stuck).toEqual([]);
  });

  it("flags nothing when nothing is wrong", () => {
    const stateDir = tempStateDir();
    for (let i = 0; i < 50; i++) writeRequestFile(stateDir, aRequest({ requestId: `ok${i}`, state: "completed" }));
    const { operator } = aRecording({ stateDir });
    const pass = operator.monitorPass();
    expect(pass.stuck).toEqual([]);
    expect(Object.values(pass.counts).every((n) => n === 0)).toBe(true);
  });

  it("flags nothing when nothing is wrong (owned or not)", () => {
    const stateDir = tempStateDir();
    // Another program's request in processing for a minute: well inside the processing stuck threshold.
    writeRequestFile(stateDir, aRequest({ requestId: "theirs", state: "processing", processingStartedAt: Date.now() - MINUTE }));
    const pass = aRecording({ stateDir }).operator.monitorPass();
    expect(pass.stuck).toEqual([]);
  });

  it("reads only rows past a threshold: each branch of its query is a range on a time, none a walk of a state", () => {
    const { reader } = aRecording();
    const db = new Database(reader.stateDir.indexFile, { readonly: true });
    try {
      const plan = (
        db
          .prepare(`EXPLAIN QUERY PLAN ${STUCK_ROWS}`)
          .all({ now: 0, queuedCutoff: 0, heartbeatCutoff: 0, unclaimedCutoff: 0, scanCutoff: 0, paused: "[]" }) as { detail: string }[]
      ).map((row) => row.detail);
      const reads = plan.filter((detail) => /\brequests\b/.test(detail) && !detail.includes("json_each"));
      expect(reads).toHaveLength(3);
      // A range on state_since, timeout_at or heartbeat_at: a healthy queue of any size has no row in it.
      for (const detail of reads)
        expect(detail).toMatch(
          /^SEARCH requests USING (COVERING )?INDEX \w+ \(state=\? AND state_since<\?|(timeout_at>\? AND )?timeout_at<\?|heartbeat_at<\?\)$/,
        );
    } finally {
      db.close();
    }
  });
});

describe("the stuck monitor acts only on what reqwatch's own queue owns", () => {
  const HOUR = 60 * MINUTE;

  it("flags a request another program left processing for hours, with what is known, and never changes it", () => {
    const stateDir = tempStateDir();
    const clock = aClock();
    // A chat gateway's shape: no version, claim or history.
    writeRequestFile(
      stateDir,
      aRequest({
        requestId: "gateway-hung",
        state: "processing",
        createdAt: clock.now() - 2 * HOUR,
        processingStartedAt: clock.now() - 72 * MINUTE,
        lastUpdatedAt: clock.now() - 72 * MINUTE,
      }),
    );
    // Opened as the dashboard opens it: without the owner's start-up recovery.
    const { operator } = aRecording({ stateDir, heartbeatTimeoutMs: 1000, recover: false, now: clock.now });
    const before = readRaw(stateDir, "gateway-hung");

    for (let i = 0; i < 3; i++) operator.monitorPass();
    const pass = operator.monitorPass();

    expect(pass.counts).toMatchObject({ stuckNotOwned: 1, released: 0, timedOut: 0, deadlineTimedOut: 0 });
    expect(pass.stuck).toEqual([
      {
        requestId: "gateway-hung",
        workspace: "ws",
        state: "processing",
        since: expect.any(Number),
        cause: "no worker holds it",
        reason: "processing 1h 12m; no reqwatch worker holds it (written by another program)",
      },
    ]);
    expect(readRaw(stateDir, "gateway-hung")).toBe(before);
  });

  it("waits for the processing stuck threshold before it flags an unclaimed request (it has no heartbeat to miss)", () => {
    const stateDir = tempStateDir();
    const clock = aClock();
    writeRequestFile(stateDir, aRequest({ requestId: "busy", state: "processing", processingStartedAt: clock.now() - 30 * MINUTE }));
    const { operator } = aRecording({ stateDir, heartbeatTimeoutMs: 1000, recover: false, now: clock.now });
    expect(operator.monitorPass().stuck).toEqual([]);
    expect(aRecording({ stateDir, processingStuckAfterMs: 20 * MINUTE, recover: false, now: clock.now }).operator.monitorPass().stuck[0]?.reason).toBe(
      "processing 30m; no reqwatch worker holds it (written by another program)",
    );
  });

  it("flags, and does not time out, an unclaimed request past its deadline; says when reqwatch moved it without a claim", () => {
    const clock = aClock();
    const { tracker, operator } = aRecording({ now: clock.now });
    tracker.create({ requestId: "by-hand", workspace: "ws", state: "processing", timeoutAt: clock.now() - 1000 });
    clock.advance(20);
    const pass = operator.monitorPass();
    expect(pass.counts).toMatchObject({ stuckNotOwned: 1, deadlineTimedOut: 0 });
    expect(pass.stuck[0]).toMatchObject({
      cause: "past its deadline",
      reason: expect.stringMatching(/^processing 20ms, past its deadline \(.+\); no reqwatch worker holds it \(moved to processing without a claim\)$/),
    });
    expect(tracker.get("by-hand")?.state).toBe("processing");
  });

  it("releases a claim that names no pid only when its heartbeat expired, and says what is not known", () => {
    const stateDir = tempStateDir();
    const clock = aClock();
    writeRequestFile(
      stateDir,
      aClaimedRequest("no-pid", { token: "t", claimedAt: clock.now() - 10 * MINUTE, heartbeatAt: clock.now() - 10 * MINUTE } as ClaimShape),
    );
    const { tracker, operator } = aRecording({ stateDir, now: clock.now });
    expect(operator.monitorPass().counts.released).toBe(1);
    expect(tracker.get("no-pid")?.transitions?.at(-1)?.reason).toBe("released: no heartbeat for 10m from a worker on an unknown host (attempt 1 of 3)");
  });

  it("says why a queued request waits: no claim from its workspace, or the workers' position", () => {
    const clock = aClock();
    const { tracker, operator } = aRecording({ queuedStuckAfterMs: 1, now: clock.now });
    tracker.create({ requestId: "first", workspace: "nightly", state: "queued" });
    tracker.create({ requestId: "second", workspace: "nightly", state: "queued" });
    tracker.create({ requestId: "elsewhere", workspace: "batch", state: "queued" });
    const claimed = tracker.claimNext({ workspace: "batch" });
    tracker.create({ requestId: "behind", workspace: "batch", state: "queued" });
    clock.advance(20);

    const reasons = Object.fromEntries(operator.monitorPass().stuck.map((s) => [s.requestId, s.reason]));
    expect(reasons.first).toBe("queued 20ms; no reqwatch worker has claimed from workspace nightly in 1ms (last claim: never)");
    expect(reasons.behind).toBe("queued 20ms; no reqwatch worker has claimed from workspace batch in 1ms (last claim 20ms ago)");
    expect(claimed?.request.requestId).toBe("elsewhere");
  });

  it("says where a queued request stands when workers are claiming from its workspace", () => {
    const clock = aClock();
    const { tracker, operator } = aRecording({ now: clock.now });
    for (const id of ["q1", "q2", "q3"]) {
      clock.advance(10);
      tracker.create({ requestId: id, workspace: "busy", state: "queued" });
    }
    clock.advance(11 * MINUTE);
    // A worker takes the oldest: q1. The others have waited past the threshold while it works.
    expect(tracker.claimNext()?.request.requestId).toBe("q1");
    clock.advance(1000);
    const reasons = operator.monitorPass().stuck.map((s) => [s.requestId, s.reason]);
    expect(reasons).toEqual([
      ["q2", "queued 11m 1s; workers are claiming from workspace busy (last claim 1s ago), 0 queued ahead of it"],
      ["q3", "queued 11m 1s; workers are claiming from workspace busy (last claim 1s ago), 1 queued ahead of it"],
    ]);
  });
});
