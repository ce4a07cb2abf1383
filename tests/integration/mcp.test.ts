import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { aStuckProcessingRequest, aRequest, writeRequestFile } from "../helpers/builders";
import { aRecording, readRaw, tempForeignDir, tempParent, tempStateDir } from "../helpers/stateDir";
import { addMessage, createClaudeMemDb } from "../helpers/claudeMemDb";
import { anAgent, call, closeAgents } from "../helpers/mcpAgent";
import { treeSnapshot } from "../helpers/treeSnapshot";

const HOUR = 60 * 60 * 1000;
afterEach(closeAgents);

describe("reqwatch mcp", () => {
  it("lists its tools, says what is stuck and why, explains it, and retries only after a dry run and a confirmation", async () => {
    const stateDir = tempStateDir();
    const now = Date.now();
    writeRequestFile(
      stateDir,
      aRequest({
        requestId: "waiting",
        workspace: "nobody",
        state: "queued",
        queuedAt: now - 2 * HOUR,
        createdAt: now - 2 * HOUR,
        lastUpdatedAt: now - 2 * HOUR,
      }),
    );
    writeRequestFile(stateDir, aRequest({ requestId: "broken", workspace: "chat", state: "failed", error: "model timed out", completedAt: now - 1000 }));
    const agent = await anAgent(stateDir);

    const { tools } = await agent.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        "cancel_requests",
        "cleanup_dry_run",
        "explain_request",
        "get_request",
        "list_requests",
        "list_sessions",
        "record_command",
        "record_file",
        "record_snapshot",
        "retry_requests",
        "session_context",
        "source_queue",
        "stuck",
      ].sort(),
    );
    for (const tool of tools) expect(tool.description?.length, tool.name).toBeGreaterThan(40);

    const stuck = JSON.parse((await call(agent, "stuck")).text);
    expect(stuck).toMatchObject({ count: 1, stuck: [{ requestId: "waiting", reason: expect.stringMatching(/^queued 2h/) }] });

    const story = await call(agent, "explain_request", { requestId: "waiting" });
    expect(story.isError).toBe(false);
    expect(story.text).toMatch(/^waiting \(workspace nobody\) is queued/);
    expect(story.text).toContain("Next: No worker has claimed it: start a worker for workspace nobody, or cancel it. Run: reqwatch cancel waiting");

    const list = JSON.parse((await call(agent, "list_requests", { states: ["failed"] })).text);
    expect(list.items.map((row: { requestId: string }) => row.requestId)).toEqual(["broken"]);

    const dryRun = JSON.parse((await call(agent, "retry_requests", { ids: ["broken"] })).text);
    expect(dryRun).toMatchObject({ dryRun: true, willChange: 1, firstIds: ["broken"] });
    expect(JSON.parse(readRaw(stateDir, "broken")).state).toBe("failed");

    const unbound = await call(agent, "retry_requests", { ids: ["broken"], confirm: true });
    expect(unbound).toMatchObject({ isError: true, text: expect.stringMatching(/dryRunId/) });
    expect(JSON.parse(readRaw(stateDir, "broken")).state).toBe("failed");

    const run = JSON.parse((await call(agent, "retry_requests", { ids: ["broken"], confirm: true, dryRunId: dryRun.dryRunId })).text);
    expect(run).toMatchObject({ dryRun: false, entry: { kind: "retry", status: "done", by: "mcp", changed: 1 } });
    const retried = JSON.parse(readRaw(stateDir, "broken"));
    expect(retried.state).toBe("queued");
    expect(retried.transitions.at(-1)).toMatchObject({ to: "queued", manual: true, by: expect.stringMatching(/^mcp/) });
  });

  it("a dry run made by one server process is confirmed by another, as a client that starts the server per call does", async () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "broken", workspace: "chat", state: "failed" }));
    const first = await anAgent(stateDir);
    const dryRun = JSON.parse((await call(first, "retry_requests", { ids: ["broken"] })).text);
    await closeAgents();

    const second = await anAgent(stateDir);
    const run = await call(second, "retry_requests", { ids: ["broken"], confirm: true, dryRunId: dryRun.dryRunId });
    expect(run.isError, run.text).toBe(false);
    expect(JSON.parse(run.text)).toMatchObject({
      dryRun: false,
      entry: { kind: "retry", status: "done", by: "mcp", summary: "Retry broken", changedIds: ["broken"] },
    });
    expect(JSON.parse(readRaw(stateDir, "broken")).state).toBe("queued");

    // Confirmed once; a second confirmation is told why it is refused, in words that fit a server started per call.
    const again = await call(second, "retry_requests", { ids: ["broken"], confirm: true, dryRunId: dryRun.dryRunId });
    expect(again).toEqual({
      isError: true,
      text: `Dry run ${dryRun.dryRunId} is not known: it expired (a dry run is kept 15m), was confirmed already, or was made on another state folder. Make the dry run again.`,
    });
  });

  it("a confirmation that asks other than its dry run is refused and changes nothing; the audit entry names what was done", async () => {
    const stateDir = tempStateDir();
    for (const [id, workspace] of [
      ["f-a", "alpha"],
      ["f-b", "beta"],
    ])
      writeRequestFile(stateDir, aRequest({ requestId: id!, workspace, state: "failed" }));
    writeRequestFile(stateDir, aRequest({ requestId: "t-z", workspace: "zzz", state: "timeout" }));
    for (const id of ["C", "D"]) writeRequestFile(stateDir, aRequest({ requestId: id, workspace: "w", state: "queued" }));
    const files = () => ["f-a", "f-b", "t-z", "C", "D"].map((id) => readRaw(stateDir, id));
    const before = files();
    const agent = await anAgent(stateDir);

    const retryDryRun = JSON.parse((await call(agent, "retry_requests", { states: ["failed"] })).text);
    expect(retryDryRun).toMatchObject({ willChange: 2, summary: "Retry 2 requests matching failed" });
    const otherFilter = await call(agent, "retry_requests", { states: ["timeout"], workspace: "zzz", confirm: true, dryRunId: retryDryRun.dryRunId });
    expect(otherFilter).toEqual({
      isError: true,
      text: `This confirmation asks "Retry every request matching timeout in zzz", but dry run ${retryDryRun.dryRunId} was "Retry 2 requests matching failed". Nothing was done: confirm with the dry run's own arguments, or make a new dry run.`,
    });
    const cancelDryRun = JSON.parse((await call(agent, "cancel_requests", { ids: ["C"] })).text);
    const otherIds = await call(agent, "cancel_requests", { ids: ["D"], confirm: true, dryRunId: cancelDryRun.dryRunId });
    expect(otherIds).toMatchObject({ isError: true, text: expect.stringContaining(`asks "Cancel D", but dry run ${cancelDryRun.dryRunId} was "Cancel C"`) });
    expect(files()).toEqual(before);
    expect(aRecording({ stateDir }).operator.actions.list()).toEqual([]);

    const cancelled = JSON.parse((await call(agent, "cancel_requests", { ids: ["C"], confirm: true, dryRunId: cancelDryRun.dryRunId })).text);
    expect(cancelled.entry).toMatchObject({
      kind: "cancel",
      by: "mcp",
      status: "done",
      summary: "Cancel C",
      target: { ids: ["C"] },
      matched: 1,
      changedIds: ["C"],
    });
    const retried = JSON.parse((await call(agent, "retry_requests", { states: ["failed"], confirm: true, dryRunId: retryDryRun.dryRunId })).text);
    expect(retried.entry).toMatchObject({
      kind: "retry",
      by: "mcp",
      status: "done",
      summary: "Retry 2 requests matching failed",
      target: { filter: { states: ["failed"] } },
      matched: 2,
    });
    expect(retried.entry.changedIds.sort()).toEqual(["f-a", "f-b"]);
    expect(["t-z", "D"].map((id) => JSON.parse(readRaw(stateDir, id)).state)).toEqual(["timeout", "queued"]);
  });

  it("reads the claude-mem queue it was given for the agent: what is stuck and why, read-only; a missing database is a tool error", async () => {
    const dir = tempParent();
    const file = path.join(dir, "claude-mem.db");
    const db = createClaudeMemDb(file, "g4");
    const now = Date.now();
    const hung = addMessage(db, { status: "processing", createdAt: now - 30 * 60_000, startedAt: now - 20 * 60_000 });
    addMessage(db, { status: "processed", createdAt: now - 60_000, startedAt: now - 50_000, finishedAt: now - 40_000 });
    db.close();
    // Given on its command line, relative to where it runs, as an agent's MCP configuration may; and one that does not exist.
    const agent = await anAgent(tempStateDir(), {}, ["--source", "claude-mem:claude-mem.db", "--source", `claude-mem:${file}.nope`], dir);
    const queue = JSON.parse((await call(agent, "source_queue", { source: `claude-mem:${file}` })).text);
    expect(queue).toMatchObject({
      source: { kind: "claude-mem", file, generation: "g4 (v12.2.2-v12.3.9)" },
      counts: { processing: 1, completed: 1 },
      stuck: 1,
      // The server reads its own clock, a moment after the test's.
      messages: [{ requestId: `claude-mem-${hung}`, stuckReason: expect.stringMatching(/^processing 20m( \d+s)?, past claude-mem's own 5m stuck limit$/) }],
    });
    // By the name the dashboard gives it; the default is the claude-mem it was given.
    for (const args of [{}, { source: "claude-mem" }])
      expect(JSON.parse((await call(agent, "source_queue", args)).text)).toMatchObject({ source: { file }, stuck: 1 });
    expect(await call(agent, "source_queue", { source: "claude-mem-2" })).toEqual({ isError: true, text: `claude-mem source: ${file}.nope does not exist.` });
    expect(await call(agent, "source_queue", { source: "redis:localhost" })).toMatchObject({
      isError: true,
      text: expect.stringContaining('Unknown source "redis:localhost"'),
    });
  });

  it("answers a bad id and a bad argument with a tool error, and keeps serving", async () => {
    const stateDir = tempStateDir();
    fs.mkdirSync(path.join(stateDir, "requests"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "requests", "torn.json"), '{"requestId": "torn", "state": "que');
    const agent = await anAgent(stateDir);
    expect(await call(agent, "get_request", { requestId: "nope" })).toEqual({
      isError: true,
      text: "Request nope does not exist (it may have been cleaned up).",
    });
    // A file there that cannot be read is said as such, with why, never "does not exist".
    for (const tool of ["get_request", "explain_request"]) {
      expect(await call(agent, tool, { requestId: "torn" })).toEqual({
        isError: true,
        text: expect.stringMatching(/^Request torn cannot be read: requests\/torn\.json: invalid JSON \(.*line 1 column 36\)\)\. The file is kept as it is/),
      });
    }
    expect(await call(agent, "explain_request", { requestId: "../etc/passwd" })).toMatchObject({ isError: true });
    expect(await call(agent, "cleanup_dry_run", { olderThan: "soon" })).toMatchObject({ isError: true, text: expect.stringMatching(/olderThan/) });
    expect(JSON.parse((await call(agent, "stuck")).text)).toEqual({ count: 0, stuck: [] });
  });

  it("records into the session and gives its context back, as a resuming agent reads it", async () => {
    const agent = await anAgent(tempStateDir());
    expect(await call(agent, "record_command", { command: "npm test", status: "failed", workflow: "fix" })).toMatchObject({
      isError: false,
      text: expect.stringMatching(/^Recorded in session /),
    });
    await call(agent, "record_file", { path: "lib/login.ts", summary: "retry on 502" });
    await call(agent, "record_snapshot", { activeTask: "fix the login retry", nextSteps: ["rerun the suite"], blockingIssues: ["provider down"] });
    const context = await call(agent, "session_context");
    expect(context.text).toContain("Current focus: fix the login retry");
    expect(context.text).toContain("Next steps (1):\n  - rerun the suite");
    expect(context.text).toContain("Blocking issues (1):\n  - provider down");
    expect(context.text).toContain("  - lib/login.ts (1 change)");
  });

  it("in a folder reqwatch only observes: reads work, every write is a tool error, and nothing in the folder changes", async () => {
    const stateDir = tempForeignDir();
    writeRequestFile(stateDir, aStuckProcessingRequest("hung"));
    writeRequestFile(stateDir, aRequest({ requestId: "failed-one", state: "failed" }));
    const before = treeSnapshot(stateDir);
    const agent = await anAgent(stateDir);

    expect(JSON.parse((await call(agent, "stuck")).text)).toMatchObject({
      count: 1,
      stuck: [{ requestId: "hung", reason: expect.stringContaining("no reqwatch worker holds it") }],
    });
    const dryRun = JSON.parse((await call(agent, "retry_requests", { ids: ["failed-one"] })).text);
    const refused = await call(agent, "retry_requests", { ids: ["failed-one"], confirm: true, dryRunId: dryRun.dryRunId });
    expect(refused).toMatchObject({ isError: true, text: expect.stringMatching(/read-only|observed/i) });
    expect(await call(agent, "record_command", { command: "ls", status: "completed" })).toMatchObject({ isError: true });
    expect(await call(agent, "cancel_requests", { ids: ["hung"], confirm: true, dryRunId: "x" })).toMatchObject({ isError: true });
    expect(treeSnapshot(stateDir)).toEqual(before);
  });
});
