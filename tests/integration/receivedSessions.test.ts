import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { runCli } from "../helpers/cli";
import { exportsOf, feed } from "../helpers/claudeCodeExports";
import { anAgent, call, closeAgents } from "../helpers/mcpAgent";
import { aRecording, tempStateDir } from "../helpers/stateDir";

// What the dashboard's receiver kept for a state folder (its telemetry.db, written here by the real
// store from Claude Code's own exports, tests/fixtures/otlp) read as sessions by `reqwatch mcp` and
// the CLI, child processes of their own, beside the folder's recorded sessions.
const MINUTE = 60_000;
afterEach(closeAgents);

/** The session ids Claude Code gave the captured prompts. */
const TOOL_SESSION = "1488ac23-c6f7-4cb6-b80c-af1979af05b5";
const HUNG_SESSION = "8c9051a4-3aaa-498d-a35e-dc4269ada41a";

function aFolderWithTelemetry() {
  const stateDir = tempStateDir();
  const { tracker, reader } = aRecording({ stateDir });
  const started = tracker.sessions.start();
  if (!started.ok) throw new Error(started.error.message);
  tracker.sessions.updateSnapshot({ activeTask: "wire the gateway" });
  const store = new TelemetryStore(path.join(reader.stateDir.storeDir, "telemetry.db"), { keepMs: 24 * 60 * MINUTE, maxBytes: 200e6 });
  feed(store, exportsOf("tool"));
  // A prompt whose API call never answered, its last record received 11 minutes ago: stuck by the otel source's 10-minute rule.
  feed(
    store,
    exportsOf("interrupted").filter((item) => item.signal === "logs"),
    Date.now() - 11 * MINUTE,
  );
  store.close();
  return { stateDir, folderSession: started.value.session.session_id };
}

describe("sessions received over OpenTelemetry, through MCP and the CLI", () => {
  it("list_sessions lists them beside the folder's, with their figures; session_context tells one, with its cost per model, tools, errors and what is stuck", async () => {
    const { stateDir, folderSession } = aFolderWithTelemetry();
    const agent = await anAgent(stateDir);

    const listed = JSON.parse((await call(agent, "list_sessions")).text) as { count: number; sessions: Record<string, unknown>[] };
    expect(listed.count).toBe(3);
    expect(listed.sessions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ source: null, sessionId: folderSession, activeTask: "wire the gateway", recorded: true }),
        expect.objectContaining({
          source: "otel",
          sessionId: TOOL_SESSION,
          from: "Claude Code",
          turns: 1,
          calls: 2,
          tools: 1,
          inputTokens: 240,
          outputTokens: 60,
          costUsd: 0.00162,
          stuck: 0,
          lastSeen: expect.stringMatching(/^2026-/),
        }),
        expect.objectContaining({ source: "otel", sessionId: HUNG_SESSION, live: 1, stuck: 1 }),
      ]),
    );

    const tool = await call(agent, "session_context", { source: "otel", sessionId: TOOL_SESSION });
    expect(tool.isError, tool.text).toBe(false);
    expect(tool.text).toMatch(new RegExp(`^Session ${TOOL_SESSION} \\(idle, received over OpenTelemetry from Claude Code;`));
    expect(tool.text).toContain("\n1 turn, 2 model calls, 1 tool use, 240 in / 60 out tokens, $0.0016\n");
    expect(tool.text).toContain("\n  - claude-sonnet-4-5: 2 calls, 240 in / 60 out tokens, $0.0016\n");
    expect(tool.text).toContain("\nTools (1): Bash (1)\n");
    expect(tool.text).toMatch(/\n {2}- turn-\d+ completed: 2 model calls, 1 tool use, 240 in \/ 60 out tokens, \$0\.0016$/);

    const hung = await call(agent, "session_context", { source: "otel", sessionId: HUNG_SESSION });
    expect(hung.text).toMatch(/\nStuck \(1\):\n {2}- turn-\d+: nothing received for 11m[^\n]*; last: user_prompt: a prompt of 9 characters/);

    // The folder's own session is still the default; an id no received session carries is a tool error that says where to look.
    expect((await call(agent, "session_context")).text).toContain("Current focus: wire the gateway");
    expect(await call(agent, "session_context", { source: "otel", sessionId: "nobody" })).toEqual({
      isError: true,
      text: "No telemetry received carries session nobody; list_sessions lists those there are.",
    });
    expect((await call(agent, "session_context", { sessionId: TOOL_SESSION })).text).toContain('one received over OpenTelemetry is read with source: "otel"');
  });

  it("`reqwatch session list` and `session show --source otel` say the same", () => {
    const { stateDir, folderSession } = aFolderWithTelemetry();
    const listed = JSON.parse(runCli(["session", "list", "--json"], { stateDir }).stdout) as { source: string | null; sessionId: string }[];
    expect(listed.map((row) => [row.source, row.sessionId]).sort()).toEqual(
      [
        ["otel", TOOL_SESSION],
        ["otel", HUNG_SESSION],
        [null, folderSession],
      ].sort(),
    );
    const table = runCli(["session", "list"], { stateDir }).stdout;
    expect(table).toMatch(
      new RegExp(`${TOOL_SESSION} +Claude Code +\\w+ +2026-[^ ]+ +1 +— +— +1 turn, 2 model calls, 1 tool use, 240 in / 60 out tokens, \\$0\\.0016\\n`),
    );
    expect(table).toMatch(new RegExp(`${folderSession} +this folder +active `));

    const shown = runCli(["session", "show", TOOL_SESSION, "--source", "otel"], { stateDir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("  - claude-sonnet-4-5: 2 calls, 240 in / 60 out tokens, $0.0016\n");
    expect(runCli(["session", "show", "--source", "nope"], { stateDir })).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Unknown session source "nope"'),
    });
  });
});
