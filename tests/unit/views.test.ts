import os from "node:os";
import { describe, expect, it } from "vitest";
import { DEFAULT_QUERY } from "../../lib/model/requestQuery";
import { explainRequest } from "../../lib/views/explainView";
import { lifecycleSegments } from "../../lib/views/lifecycle";
import { overviewMetrics } from "../../lib/views/overviewView";
import { queueStatusText, queuesView, stuckText } from "../../lib/views/queuesView";
import { requestDetailView, requestsView } from "../../lib/views/requestsView";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { aClock } from "../helpers/clock";
import { aRecording, tempForeignDir, tempParent, tempStateDir } from "../helpers/stateDir";

const MINUTE = 60_000;

describe("the overview's figures", () => {
  it("divide by the span the data covers, not the whole hour, when the first request is younger", () => {
    const clock = aClock();
    const { tracker, reader } = aRecording({ now: clock.now });
    for (let i = 0; i < 60; i++) {
      tracker.create({ requestId: `r${i}`, workspace: "w", state: "processing" });
      tracker.transition(`r${i}`, "completed");
    }
    clock.advance(2 * MINUTE);
    const metrics = overviewMetrics(reader, clock.now());
    expect(metrics.spanMs).toBe(2 * MINUTE);
    expect(metrics.perMinute).toBe(30);

    clock.advance(3 * 60 * MINUTE);
    tracker.create({ requestId: "late", workspace: "w", state: "processing" });
    tracker.transition("late", "completed");
    expect(overviewMetrics(reader, clock.now())).toMatchObject({ spanMs: 60 * MINUTE, perMinute: 1 / 60 });
  });

  it("measure queue wait and processing time from the lifecycle times of files without a history (a chat gateway's)", () => {
    const stateDir = tempStateDir();
    const now = Date.now();
    for (let i = 0; i < 4; i++) {
      const queuedAt = now - 10 * MINUTE + i;
      writeRequestFile(
        stateDir,
        aRequest({
          requestId: `g${i}`,
          state: "completed",
          createdAt: queuedAt - 100,
          queuedAt,
          processingStartedAt: queuedAt + 2000,
          completedAt: queuedAt + 2000 + (i + 1) * 1000,
          lastUpdatedAt: queuedAt + 6000,
        }),
      );
    }
    const metrics = overviewMetrics(aRecording({ stateDir }).reader, now);
    expect(metrics.queueWait).toMatchObject({ n: 4, p50: 2000 });
    expect(metrics.processing).toMatchObject({ n: 4 });
    expect(metrics.processing!.p95).toBeGreaterThan(3000);
  });

  it("draw a gateway file's lifecycle bar from its lifecycle times", () => {
    const now = Date.now();
    const segments = lifecycleSegments(
      {
        requestId: "g",
        workspace: "w",
        state: "completed",
        createdAt: now - 10_000,
        queuedAt: now - 9_000,
        processingStartedAt: now - 6_000,
        completedAt: now - 1_000,
        lastUpdatedAt: now - 1_000,
      },
      now,
    );
    expect(segments.map((s) => [s.state, s.ms])).toEqual([
      ["created", 1000],
      ["queued", 3000],
      ["processing", 5000],
      ["completed", 0],
    ]);
  });
});

describe("a lifecycle from another program's times, continued by reqwatch", () => {
  it("keeps the steps the times tell before reqwatch's first step", () => {
    const now = Date.now();
    const request = {
      requestId: "g",
      workspace: "w",
      state: "failed" as const,
      createdAt: now - 10_000,
      queuedAt: now - 9_000,
      processingStartedAt: now - 6_000,
      lastUpdatedAt: now - 1_000,
      transitions: [{ from: "processing" as const, to: "failed" as const, at: now - 1_000, reason: "cancelled" }],
    };
    expect(lifecycleSegments(request, now).map((s) => [s.state, s.ms])).toEqual([
      ["created", 1000],
      ["queued", 3000],
      ["processing", 5000],
      ["failed", 0],
    ]);
  });
});

describe("stuck reasons on rows", () => {
  it("are shown only while the request is still in the state the monitor saw", () => {
    const clock = aClock();
    const { tracker, reader, operator } = aRecording({ queuedStuckAfterMs: 1, now: clock.now });
    tracker.create({ requestId: "r", workspace: "w", state: "queued" });
    clock.advance(5);
    const stuck = operator.monitorPass().stuck;
    expect(requestsView(reader, DEFAULT_QUERY, stuck).items[0]?.stuckReason).toMatch(/^queued /);

    clock.advance(1000);
    tracker.transition("r", "processing");
    // The monitor's pass is older than the change: a processing row is not "stuck: queued 22s".
    expect(requestsView(reader, DEFAULT_QUERY, stuck).items[0]).toMatchObject({ state: "processing", stuckReason: null });
    expect(requestsView(reader, { ...DEFAULT_QUERY, stuck: true }, stuck).items).toEqual([]);
    expect(requestDetailView(reader, "r", stuck)?.stuckReason).toBeNull();
  });
});

describe("sessions known from the requests that carry their id", () => {
  it("are listed and have a page (requests, first and last seen), beside recorded ones; recording into one starts its context", async () => {
    const { sessionsView, sessionDetailView } = await import("../../lib/views/sessionsView");
    const clock = aClock();
    const { tracker, reader } = aRecording({ now: clock.now });
    tracker.create({ requestId: "r1", workspace: "w", sessionId: "from-requests", state: "queued" });
    clock.advance(60_000);
    tracker.create({ requestId: "r2", workspace: "w", sessionId: "from-requests", state: "queued" });
    const recorded = tracker.sessions.start();
    expect(recorded.ok).toBe(true);

    const rows = sessionsView(reader);
    expect(rows.map((r) => [r.sessionId, r.source === null && r.recorded, r.requests])).toEqual([
      [recorded.ok ? recorded.value.session.session_id : "", true, 0],
      ["from-requests", false, 2],
    ]);
    expect(rows[1]).toMatchObject({ state: "active", firstSeen: clock.now() - 60_000, lastSeen: clock.now() });

    expect(sessionDetailView(reader, "from-requests")).toMatchObject({
      session: null,
      sessionId: "from-requests",
      seen: { requests: 2 },
      requestCounts: { queued: 2 },
    });
    expect(sessionDetailView(reader, "nobody")).toBeNull();

    expect(tracker.sessions.updateSnapshot({ activeTask: "triage" }, "from-requests")).toMatchObject({ ok: true, value: { session_id: "from-requests" } });
    expect(sessionDetailView(reader, "from-requests")?.session?.context_snapshot?.active_task).toBe("triage");
  });
});

describe("explaining a request", () => {
  it("tells its attempts, a dropped late delivery, its callback, its session and what to do next", () => {
    const clock = aClock();
    const { tracker, reader } = aRecording({ now: clock.now, backoff: { baseMs: 0, capMs: 0 }, random: () => 0 });
    const session = tracker.sessions.start();
    if (!session.ok) throw new Error(session.error.message);
    const sessionId = session.value.session.session_id;
    tracker.sessions.updateSnapshot({ activeTask: "ship the login fix", nextSteps: ["rerun the suite"], blockingIssues: ["provider down"] });
    tracker.create({ requestId: "story", workspace: "chat", state: "queued", sessionId });
    clock.advance(2000);
    const first = tracker.claimNext({ worker: "worker-a" })!;
    clock.advance(3000);
    tracker.fail("story", first.token, "model timed out", { retryable: true });
    clock.advance(1000);
    const second = tracker.claimNext({ worker: "worker-b" })!;
    clock.advance(500);
    tracker.fail("story", second.token, "model timed out again", { retryable: false });
    tracker.complete("story", first.token, { output: "late" });
    tracker.update("story", { fields: { callback: { success: false, attempts: 3, retryTimestamps: [], error: "HTTP 502" } } });

    const story = explainRequest(reader, "story", reader.stuck())!;
    // Each claim step keeps the worker process that made it.
    const worker = { pid: process.pid, host: os.hostname(), processStartedAt: expect.any(Number) };
    expect(story.attempts).toEqual([
      {
        number: 1,
        claimedAt: expect.any(Number),
        by: "worker-a",
        token: first.token,
        worker,
        ended: { at: expect.any(Number), state: "queued", how: "failed", reason: expect.any(String), error: "model timed out" },
      },
      {
        number: 2,
        claimedAt: expect.any(Number),
        by: "worker-b",
        token: second.token,
        worker,
        ended: { at: expect.any(Number), state: "failed", how: "failed", reason: expect.any(String), error: "model timed out again" },
      },
    ]);
    expect(story.lines).toContain(
      `Attempt 1: claimed by worker-a (pid ${process.pid} on ${os.hostname()}) at ${new Date(story.attempts[0]!.claimedAt).toISOString()}, queued (${JSON.stringify(story.attempts[0]!.ended!.reason)}): "model timed out".`,
    );
    expect(story.timeInStates).toMatchObject({ queued: 3000, processing: 3500 });
    // The final state is a moment: the first line says when it was reached, not "failed 0ms".
    expect(story.lines[1]).toBe("Time in each state: created 0ms, queued 3s, processing 4s.");
    expect(story.droppedDeliveries).toEqual([{ at: expect.any(Number), reason: expect.stringMatching(/^late completion dropped/), by: null }]);
    expect(story.callback).toEqual({ success: false, attempts: 3, error: "HTTP 502" });
    expect(story.session).toEqual({ sessionId, activeTask: "ship the login fix", nextSteps: ["rerun the suite"], blockers: ["provider down"] });
    expect(story.next).toEqual({ advice: expect.stringMatching(/^Retry it/), command: "reqwatch retry story" });
    expect(story.lines.at(-1)).toBe(`Next: ${story.next.advice} Run: reqwatch retry story`);
    expect(story.lines).toContain('Callback: failed after 3 attempts ("HTTP 502").');
    expect(story.lines).toContain(`Session ${sessionId}: focus "ship the login fix".`);
    expect(story.lines).toContain('  Blockers: "provider down".');
  });

  it("says why a queued request is stuck and offers to cancel it; says nothing is wrong with a completed one", () => {
    const clock = aClock();
    const { tracker, reader } = aRecording({ now: clock.now, queuedStuckAfterMs: MINUTE });
    tracker.create({ requestId: "waiting", workspace: "nobody", state: "queued" });
    tracker.create({ requestId: "done", workspace: "w", state: "processing" });
    tracker.transition("done", "completed");
    clock.advance(2 * MINUTE);
    const waiting = explainRequest(reader, "waiting", reader.stuck())!;
    expect(waiting.stuckReason).toMatch(/^queued 2m/);
    expect(waiting.next).toEqual({
      advice: "No worker has claimed it: start a worker for workspace nobody, or cancel it.",
      command: "reqwatch cancel waiting",
    });
    expect(explainRequest(reader, "done", reader.stuck())!.next).toEqual({ advice: "Nothing to do: it completed.", command: null });
    expect(explainRequest(reader, "missing", [])).toBeNull();
  });

  it("does not take a request another program moved to processing for a reqwatch worker's", () => {
    const { tracker, reader } = aRecording();
    tracker.create({ requestId: "theirs", workspace: "gw", state: "queued" });
    tracker.transition("theirs", "processing", { by: "gateway" });
    const story = explainRequest(reader, "theirs", reader.stuck())!;
    expect(story.lines).toContainEqual(
      expect.stringMatching(
        /^Attempt 1: moved to processing by gateway at \S+ without a reqwatch claim \(another program, or by hand\); no reqwatch worker holds it\.$/,
      ),
    );
    expect(story.next.advice).toBe(
      "No reqwatch worker holds it: whatever moved it to processing is expected to finish it. If that is gone, send it back to the queue.",
    );
    expect(story.next.command).toBe("reqwatch retry theirs");
  });

  it("offers no command of reqwatch's in a folder it only observes, where every one is refused", () => {
    const stateDir = tempForeignDir();
    const now = Date.now();
    writeRequestFile(stateDir, aRequest({ requestId: "failed", workspace: "gw", state: "failed", error: "upstream 502" }, now));
    writeRequestFile(stateDir, aRequest({ requestId: "hung", workspace: "gw", state: "processing", processingStartedAt: now - 3 * 60 * MINUTE }, now));
    const { tracker, reader } = aRecording({ stateDir, cacheDir: tempParent() });
    expect(tracker.ownership.access).toBe("observed");
    for (const id of ["failed", "hung"]) {
      const { next, lines } = explainRequest(reader, id, reader.stuck())!;
      expect(next.command, id).toBeNull();
      expect(next.advice).toMatch(/The program that writes this folder has to do it: reqwatch only observes it \(.+\)\.$/);
      expect(lines.at(-1)).not.toMatch(/Run: reqwatch/);
    }
  });
});

describe("the queues", () => {
  it("are listed by name as a person reads it: ws2 before ws10", () => {
    const { tracker, reader } = aRecording();
    for (const workspace of ["ws10", "ws2", "ws1", "batch", "ws11"]) tracker.create({ workspace, state: "queued" });
    expect(queuesView(reader, []).map((row) => row.workspace)).toEqual(["batch", "ws1", "ws2", "ws10", "ws11"]);
  });

  it("say a queue is stuck when a request in it is, queued or processing, and sum to the stuck count", () => {
    const stateDir = tempStateDir();
    const now = Date.now();
    // Another program's requests: one nobody holds for an hour, one past its deadline, one that started a minute ago.
    writeRequestFile(stateDir, aRequest({ requestId: "unheld", workspace: "gateway", state: "processing", processingStartedAt: now - 60 * MINUTE }, now));
    writeRequestFile(
      stateDir,
      aRequest({ requestId: "overdue", workspace: "gateway", state: "processing", processingStartedAt: now - MINUTE, timeoutAt: now - 1000 }, now),
    );
    writeRequestFile(stateDir, aRequest({ requestId: "busy", workspace: "gateway", state: "processing", processingStartedAt: now - MINUTE }, now));
    writeRequestFile(stateDir, aRequest({ requestId: "fresh", workspace: "other", state: "processing", processingStartedAt: now - MINUTE }, now));
    writeRequestFile(stateDir, aRequest({ requestId: "old", workspace: "slow", state: "queued", queuedAt: now - 20 * MINUTE }, now));
    // The gateway's own queue too: one waiting past the threshold, one just in.
    writeRequestFile(stateDir, aRequest({ requestId: "waiting", workspace: "gateway", state: "queued", queuedAt: now - 89 * MINUTE }, now));
    writeRequestFile(stateDir, aRequest({ requestId: "new", workspace: "gateway", state: "queued", queuedAt: now - MINUTE }, now));
    const { reader } = aRecording({ stateDir, processingStuckAfterMs: 30 * MINUTE, queuedStuckAfterMs: 10 * MINUTE, recover: false });
    const stuck = reader.stuck();
    const rows = queuesView(reader, stuck);
    expect(
      rows.map(({ workspace, queued, processing, stuck, stuckQueued, stuckProcessing, stuckCauses, status }) => ({
        workspace,
        queued,
        processing,
        stuck,
        stuckQueued,
        stuckProcessing,
        stuckCauses,
        status,
      })),
    ).toEqual([
      {
        workspace: "gateway",
        queued: 2,
        processing: 3,
        stuck: 3,
        stuckQueued: 1,
        stuckProcessing: 2,
        stuckCauses: ["waited too long", "past its deadline", "no worker holds it"],
        status: "stuck",
      },
      { workspace: "other", queued: 0, processing: 1, stuck: 0, stuckQueued: 0, stuckProcessing: 0, stuckCauses: [], status: "running" },
      { workspace: "slow", queued: 1, processing: 0, stuck: 1, stuckQueued: 1, stuckProcessing: 0, stuckCauses: ["waited too long"], status: "stuck" },
    ]);
    expect(rows.reduce((sum, row) => sum + row.stuck, 0)).toBe(stuck.length);
    expect(stuckText(rows[0]!)).toBe("stuck: 2 of 3 processing (past its deadline, no worker holds it), 1 of 2 queued (waited too long)");
    expect(queueStatusText(rows[2]!)).toBe("stuck: 1 of 1 queued (waited too long)");
    expect(queueStatusText(rows[1]!)).toBe("running");
  });

  it("say what in a paused queue is stuck: its pause excuses the wait, not a stuck processing request", () => {
    const stateDir = tempStateDir();
    const now = Date.now();
    writeRequestFile(stateDir, aRequest({ requestId: "unheld", workspace: "batch", state: "processing", processingStartedAt: now - 60 * MINUTE }, now));
    writeRequestFile(stateDir, aRequest({ requestId: "waiting", workspace: "batch", state: "queued", queuedAt: now - 89 * MINUTE }, now));
    const { reader, operator } = aRecording({ stateDir, processingStuckAfterMs: 30 * MINUTE, queuedStuckAfterMs: 10 * MINUTE, recover: false });
    operator.pause("batch", { by: "ops", reason: "deploy" });
    const stuck = reader.stuck();
    const [row] = queuesView(reader, stuck);
    expect(row).toMatchObject({ status: "paused", stuck: 1, stuckQueued: 0, stuckProcessing: 1 });
    expect(row!.stuck).toBe(stuck.length);
    expect(queueStatusText(row!)).toBe("paused by ops: deploy; stuck: 1 of 1 processing (no worker holds it)");
  });
});
