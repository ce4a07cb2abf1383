import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { aClock } from "../helpers/clock";
import { eventually } from "../helpers/processes";
import { aRecording, aTracker, tempStateDir } from "../helpers/stateDir";

const HOUR = 3_600_000;

function ok<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(`expected ok, got: ${result.error.message}`);
  return result.value;
}

/** A session file as another session tracker writes it (snake_case, ISO times, fields reqwatch does not know). */
const anotherToolsSession = (id: string, lastUpdated: string) => ({
  session_id: id,
  created_at: "2025-01-26T09:00:00Z",
  last_updated: lastUpdated,
  commands_executed: [
    { timestamp: "2025-01-26T09:00:00Z", command: "create user registration API", workflow: "complete_system", duration_seconds: 600, status: "completed" },
  ],
  files_modified: {
    "src/routes/users.ts": {
      first_modified: "2025-01-26T09:10:00Z",
      last_modified: "2025-01-26T11:04:00Z",
      modification_count: 2,
      changes_summary: "Created registration endpoint",
      workflows: ["complete_system"],
    },
  },
  patterns_detected: ["registration"],
  workflows_used: { complete_system: 1 },
  context_snapshot: {
    active_task: "User registration system",
    completed_steps: ["Created registration API endpoint"],
    next_steps: ["Add rate limiting"],
    key_files: ["src/routes/users.ts"],
    blocking_issues: [],
  },
  statistics: { total_commands: 99 },
  tool_version: "1.0.0",
});

describe("sessions", () => {
  it("continues the session updated within 24 hours, and starts a new one after (the boundary included)", () => {
    const clock = aClock(Date.parse("2026-03-01T10:00:00Z"));
    const { tracker, reader } = aRecording({ now: clock.now });
    const first = ok(tracker.sessions.start());
    expect(first).toMatchObject({ started: true, reason: "none" });
    clock.advance(24 * HOUR);
    expect(ok(tracker.sessions.start())).toMatchObject({ started: false, reason: "continued", session: { session_id: first.session.session_id } });
    clock.advance(24 * HOUR + 1);
    const next = ok(tracker.sessions.start());
    expect(next).toMatchObject({ started: true, reason: "expired" });
    expect(next.session.session_id).not.toBe(first.session.session_id);
    // The expired one is kept and listed.
    expect(
      reader.sessions
        .list()
        .map((s) => s.sessionId)
        .sort(),
    ).toEqual([first.session.session_id, next.session.session_id].sort());
  });

  it("records commands, files, patterns, workflows and the snapshot, and derives the statistics", () => {
    const clock = aClock(Date.parse("2026-03-01T10:00:00Z"));
    const tracker = aTracker({ now: clock.now });
    ok(tracker.sessions.recordCommand({ command: "add authentication to API", workflow: "complete_system", durationSeconds: 420, status: "completed" }));
    clock.advance(HOUR);
    ok(tracker.sessions.recordFile({ path: "src/auth/middleware.ts", summary: "Added JWT validation", workflow: "complete_system" }));
    ok(tracker.sessions.recordFile({ path: "src/auth/middleware.ts", summary: "fixed cookie parsing", workflow: "orchestrated" }));
    ok(
      tracker.sessions.recordCommand({
        command: "fix login endpoint bug in authentication",
        workflow: "orchestrated",
        durationSeconds: 180,
        status: "partial",
      }),
    );
    const session = ok(tracker.sessions.updateSnapshot({ activeTask: "Building authentication system", nextSteps: ["Add refresh tokens"] }));

    expect(session.commands_executed).toHaveLength(2);
    expect(session.commands_executed?.[0]).toEqual({
      timestamp: "2026-03-01T09:53:00.000Z",
      command: "add authentication to API",
      workflow: "complete_system",
      duration_seconds: 420,
      status: "completed",
    });
    expect(session.files_modified?.["src/auth/middleware.ts"]).toEqual({
      first_modified: "2026-03-01T11:00:00.000Z",
      last_modified: "2026-03-01T11:00:00.000Z",
      modification_count: 2,
      changes_summary: "Added JWT validation, fixed cookie parsing",
      workflows: ["complete_system", "orchestrated"],
    });
    // The documented rule: words of 4+ characters, not stopwords, deduplicated in order; then areas of files.
    expect(session.patterns_detected).toEqual(["authentication", "area:src/auth", "login", "endpoint"]);
    expect(session.workflows_used).toEqual({ complete_system: 1, orchestrated: 1 });
    expect(session.context_snapshot).toMatchObject({ active_task: "Building authentication system", next_steps: ["Add refresh tokens"], completed_steps: [] });
    expect(session.statistics).toMatchObject({
      total_commands: 2,
      total_files_modified: 1,
      total_workflows: 2,
      session_duration_minutes: 60,
      commands_partial: 1,
    });
  });

  it("reset ends the current session, keeps it, and starts a new one", () => {
    const tracker = aTracker();
    const first = ok(tracker.sessions.start()).session.session_id;
    const reset = ok(tracker.sessions.reset());
    expect(reset.ended).toBe(first);
    expect(tracker.sessions.get(first)?.ended_at).toBeDefined();
    expect(ok(tracker.sessions.start())).toMatchObject({ started: false, session: { session_id: reset.session.session_id } });
  });

  it("a corrupt current session is reported and kept; work goes on in a new session", () => {
    const stateDir = tempStateDir();
    const { tracker, reader, operator } = aRecording({ stateDir });
    const first = ok(tracker.sessions.start()).session.session_id;
    const file = `${stateDir}/sessions/${first}.json`;
    fs.writeFileSync(file, '{"session_id": "');
    const recorded = tracker.sessions.recordCommand({ command: "keep going", status: "completed" }, first);
    expect(recorded.ok).toBe(false);
    expect(!recorded.ok && recorded.error).toMatchObject({ code: "CORRUPT_FILE", message: expect.stringContaining("left as it is") });
    const next = ok(tracker.sessions.start());
    expect(next).toMatchObject({ started: true, reason: "unreadable" });
    expect(fs.readFileSync(file, "utf8")).toBe('{"session_id": "');
    ok(tracker.sessions.recordCommand({ command: "keep going", status: "completed" }));
    operator.recover();
    expect(reader.unreadableFiles()).toEqual([expect.objectContaining({ file: `sessions/${first}.json`, reason: "invalid JSON" })]);
  });

  it("reads another tool's session file leniently and keeps what it does not know", () => {
    const stateDir = tempStateDir();
    const clock = aClock(Date.parse("2025-01-26T13:00:00Z"));
    fs.mkdirSync(`${stateDir}/sessions`, { recursive: true });
    fs.writeFileSync(
      `${stateDir}/sessions/a1b2c3d4-e5f6-7890-abcd-ef1234567890.json`,
      JSON.stringify(anotherToolsSession("a1b2c3d4-e5f6-7890-abcd-ef1234567890", "2025-01-26T12:30:00Z"), null, 2),
    );
    fs.writeFileSync(`${stateDir}/sessions/sparse.json`, JSON.stringify({ created_at: "2025-01-20T00:00:00Z" }));
    const tracker = aTracker({ stateDir, now: clock.now });
    expect(tracker.sessions.get("sparse")).toMatchObject({ session_id: "sparse" });
    const started = ok(tracker.sessions.start());
    expect(started).toMatchObject({ started: false, session: { session_id: "a1b2c3d4-e5f6-7890-abcd-ef1234567890" } });
    const after = ok(tracker.sessions.recordCommand({ command: "add email validation", workflow: "orchestrated", durationSeconds: 180, status: "completed" }));
    expect(after).toMatchObject({ tool_version: "1.0.0", workflows_used: { complete_system: 1, orchestrated: 1 } });
    // Statistics are derived, never taken from the file.
    expect(after.statistics).toMatchObject({ total_commands: 2, total_files_modified: 1 });
  });

  it("never throws into the caller's workflow: a failed write is a result", () => {
    const stateDir = tempStateDir();
    const tracker = aTracker({ stateDir });
    fs.rmSync(`${stateDir}/sessions`, { recursive: true });
    fs.writeFileSync(`${stateDir}/sessions`, "not a folder");
    const result = tracker.sessions.recordCommand({ command: "anything", status: "completed" });
    expect(result).toMatchObject({ ok: false, error: { code: "IO_ERROR" } });
    expect(tracker.sessions.recordCommand({ command: "", status: "completed" })).toMatchObject({ ok: false, error: { code: "BAD_INPUT" } });
    expect(tracker.sessions.recordCommand({ command: "x", status: "done" as never })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining("completed, partial, failed") },
    });
  });

  it("an id that cannot be a session's file name is refused, and named a session id", () => {
    const tracker = aTracker();
    expect(() => tracker.sessions.get("../secret")).toThrow(/^Invalid session id: "\.\.\/secret"/);
    expect(tracker.sessions.recordCommand({ command: "x", status: "completed" }, "a/b")).toMatchObject({
      ok: false,
      error: { code: "BAD_INPUT", message: expect.stringMatching(/^Invalid session id/) },
    });
  });

  it("counts a session's requests by state", () => {
    const { tracker, reader } = aRecording();
    const id = ok(tracker.sessions.start()).session.session_id;
    tracker.create({ workspace: "w", state: "queued", sessionId: id });
    tracker.create({ workspace: "w", state: "queued", sessionId: id });
    tracker.create({ workspace: "w", state: "queued", sessionId: "someone-else" });
    expect(reader.countsByState({ sessionId: id })).toMatchObject({ queued: 2 });
  });
});

describe("sessions written by other tools", () => {
  it("reach the index and the change feed through the watcher, once each", async () => {
    const stateDir = tempStateDir();
    const { tracker, reader, upkeep } = aRecording({ stateDir });
    const ingest = upkeep.startIngest({ reconcileEveryMs: 60_000 });
    const from = reader.feedLastSeq();
    const temp = `${stateDir}/sessions/.hook.tmp`;
    fs.writeFileSync(temp, JSON.stringify(anotherToolsSession("from-a-hook", "2026-03-01T10:00:00Z")));
    fs.renameSync(temp, `${stateDir}/sessions/from-a-hook.json`);
    await eventually(() => reader.sessions.list().find((s) => s.sessionId === "from-a-hook"));
    ok(tracker.sessions.updateSnapshot({ activeTask: "ours now" }, "from-a-hook"));
    // A second hook's session, written after our update: once it is in, the watcher has seen our write.
    fs.writeFileSync(temp, JSON.stringify(anotherToolsSession("sentinel", "2026-03-01T11:00:00Z")));
    fs.renameSync(temp, `${stateDir}/sessions/sentinel.json`);
    await eventually(() => reader.sessions.list().find((s) => s.sessionId === "sentinel"));
    const changes = reader.changesSince(from).filter((c) => c.kind === "session.upserted" && c.requestId === "from-a-hook");
    expect(changes.map((c) => c.session?.activeTask)).toEqual(["User registration system", "ours now"]);
    ingest.stop();
  });
});

describe("recovery of sessions/", () => {
  it("removes a dead writer's temp file in sessions/ and keeps a live one's", () => {
    const stateDir = tempStateDir();
    fs.mkdirSync(`${stateDir}/sessions`, { recursive: true });
    fs.writeFileSync(`${stateDir}/sessions/.s1.json.999999999.abcdef01.tmp`, "{");
    fs.writeFileSync(`${stateDir}/sessions/.s2.json.${process.ppid}.abcdef02.tmp`, "{");
    const report = aTracker({ stateDir }).openReport;
    expect(report?.removedTempFiles).toEqual(["sessions/.s1.json.999999999.abcdef01.tmp"]);
    expect(fs.existsSync(`${stateDir}/sessions/.s1.json.999999999.abcdef01.tmp`)).toBe(false);
    expect(fs.existsSync(`${stateDir}/sessions/.s2.json.${process.ppid}.abcdef02.tmp`)).toBe(true);
  });
});
