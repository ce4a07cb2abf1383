import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { exportsOf, feed } from "../helpers/claudeCodeExports";
import { anAgent, call, closeAgents } from "../helpers/mcpAgent";
import { aRecording, tempStateDir } from "../helpers/stateDir";

// The turns the dashboard's receiver kept for a state folder (its telemetry.db, written here by the
// real store from Claude Code's own exports, tests/fixtures/otlp), read one at a time by `reqwatch
// mcp` (a child process) as their pages show them: list_requests, get_request, explain_request.
const MINUTE = 60_000;
afterEach(closeAgents);

function aFolderWithTelemetry() {
  const stateDir = tempStateDir();
  const { reader } = aRecording({ stateDir });
  const store = new TelemetryStore(path.join(reader.stateDir.storeDir, "telemetry.db"), { keepMs: 24 * 60 * MINUTE, maxBytes: 200e6 });
  // 529 errors, then an answer.
  feed(store, exportsOf("retry"));
  // 529 errors until Claude Code gave up.
  feed(store, exportsOf("exhausted"));
  // A prompt whose API call never answered, its last record received 11 minutes ago: stuck by the otel source's 10-minute rule.
  feed(
    store,
    exportsOf("interrupted").filter((item) => item.signal === "logs"),
    Date.now() - 11 * MINUTE,
  );
  store.close();
  return stateDir;
}

type Row = { requestId: string; state: string; source: string; stuckReason: string | null; note: string | null };

describe("turns received over OpenTelemetry, through MCP", () => {
  it("list_requests with source otel lists the turns; get_request and explain_request tell one as its page does: steps, model calls, errors, why it is stuck", async () => {
    const stateDir = aFolderWithTelemetry();
    const agent = await anAgent(stateDir);

    const listed = await call(agent, "list_requests", { source: "otel" });
    expect(listed.isError, listed.text).toBe(false);
    const { items } = JSON.parse(listed.text) as { items: Row[] };
    expect(items.map((row) => [row.state, row.source])).toEqual([
      ["processing", "otel"],
      ["failed", "otel"],
      ["completed", "otel"],
    ]);
    const [hung, gaveUp, retried] = items as [Row, Row, Row];
    expect(hung.stuckReason).toMatch(/^nothing received for 11m/);
    expect(JSON.parse((await call(agent, "list_requests", { source: "otel", states: ["completed"] })).text).items).toHaveLength(1);

    const got = await call(agent, "get_request", { source: "otel", requestId: retried.requestId });
    expect(got.isError, got.text).toBe(false);
    const detail = JSON.parse(got.text) as {
      request: { requestId: string; state: string; model: string };
      stuckReason: string | null;
      storedBy: string;
      steps: { name: string; summary: string }[];
    };
    expect(detail.request).toMatchObject({ requestId: retried.requestId, state: "completed", model: "claude-sonnet-4-5" });
    expect(detail.stuckReason).toBeNull();
    expect(detail.storedBy).toBe("reqwatch");
    const names = detail.steps.map((step) => step.name);
    expect(names[0]).toBe("user_prompt");
    expect(names).toContain("api_request");
    expect(detail.steps.find((step) => step.name === "model call")?.summary).toContain("3 attempts");

    const told = await call(agent, "explain_request", { source: "otel", requestId: retried.requestId });
    expect(told.isError, told.text).toBe(false);
    expect(told.text).toMatch(new RegExp(`^${retried.requestId} \\(received over OpenTelemetry, claude-code, session [^)]+\\) is completed, for `));
    expect(told.text).toContain("\n  Model claude-sonnet-4-5; 1 model call");
    expect(told.text).toContain("\n  Attempt 3.\n  Not stuck.\n");

    const failed = await call(agent, "explain_request", { source: "otel", requestId: gaveUp.requestId });
    expect(failed.text).toMatch(new RegExp(`^${gaveUp.requestId} \\([^)]+\\) is failed, for `));
    expect(failed.text).toMatch(/\n {2}Error: [^\n]*529/);
    expect(failed.text).toMatch(/\n {4}- \d{4}-\d\d-\d\dT[^ ]+ api_error: /);

    const stuck = await call(agent, "explain_request", { source: "otel", requestId: hung.requestId });
    expect(stuck.text).toMatch(/\n {2}Stuck: nothing received for 11m[^\n]*; last: user_prompt: a prompt of 9 characters/);

    // A row the store does not hold, a source this server was not given, and a filter a source cannot apply: tool errors in words.
    expect(await call(agent, "get_request", { source: "otel", requestId: "turn-999999" })).toEqual({
      isError: true,
      text: "otel has no row turn-999999 (it may have been trimmed by the retention, or deleted by its owner).",
    });
    expect((await call(agent, "get_request", { source: "sqlite:/etc/passwd.json", requestId: "turn-1" })).text).toMatch(
      /is not a source this server was given/,
    );
    expect((await call(agent, "list_requests", { source: "otel", callbackFailed: true })).text).toBe(
      "callbackFailed is not for a source: it records no callbacks and lists in its id order (order sets which way); nothing was read.",
    );
    // Without a source, the folder's, as before.
    expect((await call(agent, "get_request", { requestId: retried.requestId })).text).toMatch(/does not exist/);
  });
});
