import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceStatus } from "../../lib/sources/liveSource";
import { anAnthropicMock, type Scenario } from "../helpers/anthropicMock";
import { anAgent, call, closeAgents } from "../helpers/mcpAgent";
import { CLIENTS, installedClient } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { eventually, waitForExit } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { receivedTurns } from "../helpers/receivedTurns";

// The real Claude Code CLI (pinned, from the npm registry), run headless as a user runs it, against a
// local stand-in for the Messages API, exporting its telemetry as its monitoring docs say to the
// dashboard's receiver. What the dashboard's API shows is checked against what the CLI did.
const SETTINGS = { port: 0, keepMs: 86_400_000, stuckAfterMs: 2000 };
let claude: string;
let receiver: string;
let stateDir: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
const { get, turnOf } = receivedTurns(() => dashboard);

beforeAll(async () => {
  claude = path.join(installedClient(CLIENTS.claudeCode), "node_modules/.bin/claude");
  stateDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-claude-code-")), "state");
  // A turn with nothing new for 2 s is stuck here (10 minutes by default).
  dashboard = await aDashboard({ stateDir }, SETTINGS, "file");
  const status = await dashboard.runtime.telemetry!.ready;
  receiver = status.url!;
}, 600_000);
afterAll(async () => {
  await dashboard.close();
  fs.rmSync(path.dirname(stateDir), { recursive: true, force: true });
});

function startClaude(
  prompt: string,
  apiUrl: string,
  options: { protocol?: "http/json" | "http/protobuf"; env?: Record<string, string>; args?: string[] } = {},
): ChildProcess {
  const home = tempParent();
  return spawn(claude, ["-p", prompt, "--model", "claude-sonnet-4-5", ...(options.args ?? [])], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      // Its own home: no settings of the machine's user.
      HOME: home,
      ANTHROPIC_BASE_URL: apiUrl,
      ANTHROPIC_API_KEY: "test-key-for-the-mock",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      // What the README tells a user to set.
      CLAUDE_CODE_ENABLE_TELEMETRY: "1",
      CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1",
      OTEL_LOGS_EXPORTER: "otlp",
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver,
      OTEL_EXPORTER_OTLP_PROTOCOL: options.protocol ?? "http/protobuf",
      OTEL_EXPORTER_OTLP_COMPRESSION: "gzip",
      OTEL_LOG_USER_PROMPTS: "1",
      OTEL_LOG_TOOL_DETAILS: "1",
      OTEL_LOGS_EXPORT_INTERVAL: "500",
      OTEL_BSP_SCHEDULE_DELAY: "500",
      ...options.env,
    } as Record<string, string | undefined> as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function runClaude(prompt: string, scenario: Scenario, options: Parameters<typeof startClaude>[2] = {}) {
  const api = await anAnthropicMock(scenario);
  try {
    const child = startClaude(prompt, api.url, options);
    let output = "";
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    const code = await waitForExit(child);
    return { code, output, calls: api.calls.length };
  } finally {
    await api.close();
  }
}

describe("Claude Code, run for real, seen through its own telemetry", () => {
  it("a plain prompt is one turn: created at the prompt, completed with its answer, one model call with its tokens and cost", async () => {
    const run = await runClaude("say hello, plainly", "text", { protocol: "http/json" });
    expect(run.code, run.output).toBe(0);
    const { row, view } = await turnOf("say hello, plainly", "completed");
    expect(row).toMatchObject({
      requestId: expect.stringMatching(/^turn-\d+$/),
      workspace: "claude-code",
      model: "claude-sonnet-4-5",
      tokens: 150,
      stuckReason: null,
    });
    expect(row.note).toBe("1 model call, 120 in / 30 out tokens, $0.0008");
    expect(view.request).toMatchObject({ prompt: "say hello, plainly", output: "Hello from the mock.", state: "completed" });
    expect(view.request.completedAt).toBeGreaterThanOrEqual(view.request.createdAt);
    expect(view.steps!.map((step) => step.name)).toEqual(
      expect.arrayContaining(["user_prompt", "api_request", "model call", "assistant_response", "turn ended"]),
    );
    expect(view.steps![0]!.name).toBe("user_prompt");
    // The session is Claude Code's own: its turns are filtered by it.
    const session = await get<RequestsView>(`/api/requests?source=otel&session=${row.sessionId}`);
    expect(session.items.map((item) => item.requestId)).toEqual([row.requestId]);
  }, 120_000);

  it("a prompt that runs a tool: one turn with both model calls and the tool, its command and result", async () => {
    const run = await runClaude("run echo hi, please", "tool", { args: ["--allowedTools", "Bash"] });
    expect(run.code, run.output).toBe(0);
    const { row, view } = await turnOf("run echo hi, please", "completed");
    expect(row.note).toBe("2 model calls, 1 tool use, 240 in / 60 out tokens, $0.0016");
    const steps = view.steps!.map((step) => `${step.name}: ${step.summary}`);
    expect(steps).toContainEqual(expect.stringMatching(/^tool_decision: Bash, accept/));
    expect(steps).toContainEqual(expect.stringMatching(/^tool Bash: done, .*\$ echo hi/));
    expect(steps).toContainEqual(expect.stringMatching(/^tool_result: Bash, ok/));
    expect(steps.filter((step) => step.startsWith("model call: "))).toHaveLength(2);
  }, 120_000);

  it("529 twice, then an answer: completed, with the attempts it took", async () => {
    const run = await runClaude("answer after two overloads", "overloaded-twice", { env: { CLAUDE_CODE_OVERLOADED_RETRY_BASE_DELAY_MS: "50" } });
    expect(run.code, run.output).toBe(0);
    expect(run.calls).toBe(3);
    const { row, view } = await turnOf("answer after two overloads", "completed");
    expect(row.attempt).toBe(3);
    expect(view.steps!.map((step) => step.summary)).toContainEqual(expect.stringMatching(/3 attempts/));
  }, 120_000);

  it("retries exhausted: failed, with the API's error and how many attempts were made", async () => {
    const run = await runClaude("overloaded until it gives up", "overloaded", {
      env: { CLAUDE_CODE_MAX_RETRIES: "2", CLAUDE_CODE_OVERLOADED_RETRY_BASE_DELAY_MS: "50" },
    });
    expect(run.code).not.toBe(0);
    expect(run.output).toContain("529");
    const { row, view } = await turnOf("overloaded until it gives up", "failed");
    expect(view.request.error).toMatch(/^529, Overloaded after \d+ attempts$/);
    expect(row.attempt).toBe(run.calls);
    expect(view.steps!.map((step) => step.name)).toEqual(expect.arrayContaining(["api_error", "api_retries_exhausted"]));
  }, 120_000);

  it("a turn killed mid-way (the API never answered): processing, then stuck, saying what it last did", async () => {
    const api = await anAnthropicMock("hang");
    const child = startClaude("wait for an answer that never comes", api.url);
    try {
      // Not asked whether it is stuck yet: with 2 s to be stuck, a busy machine's first look can come after it.
      await turnOf("wait for an answer that never comes", "processing");
      const exited = waitForExit(child);
      child.kill("SIGKILL");
      await exited;
      const stuck = await eventually(async () => {
        const page = await get<RequestsView>(`/api/requests?source=otel&text=${encodeURIComponent("wait for an answer that never comes")}`);
        return page.items.find((item) => item.stuckReason !== null);
      }, 30_000);
      expect(stuck.state).toBe("processing");
      expect(stuck.stuckReason).toMatch(/^nothing received for \d+s; last: user_prompt: a prompt of 35 characters \(\d+s ago\)$/);
      // The header's badge counts it too, from the source's next look (every few seconds while nothing is written).
      await eventually(
        async () => ((await get<{ sources: SourceStatus[] }>("/api/sources")).sources.find((source) => source.name === "otel")!.stuck >= 1 ? true : undefined),
        30_000,
      );
      // An agent asking through MCP (with the same stuck rule) is told the same.
      const answer = await call(await anAgent(stateDir, { REQWATCH_TELEMETRY_STUCK_AFTER: "2s" }), "source_queue", { source: "otel" });
      const queue = JSON.parse(answer.text) as { stuck: number; messages: { requestId: string; stuckReason: string }[] };
      expect(queue.messages.find((message) => message.requestId === stuck.requestId)?.stuckReason).toMatch(
        /^nothing received for \d+s; last: user_prompt: a prompt of 35 characters/,
      );
      await closeAgents();
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await api.close();
    }
  }, 120_000);

  it("keeps what it receives in a store of its own beside the index, and shows it again after a restart", async () => {
    const file = dashboard.runtime.telemetry!.status().file;
    expect(file).toBe(path.join(path.dirname(dashboard.runtime.reader.stateDir.indexFile), "telemetry.db"));
    const before = (await get<RequestsView>("/api/requests?source=otel")).items.map((item) => [item.requestId, item.state]);
    expect(before.length).toBeGreaterThanOrEqual(5);
    await dashboard.close();
    dashboard = await aDashboard({ stateDir }, SETTINGS, "file");
    const after = (await get<RequestsView>("/api/requests?source=otel")).items.map((item) => [item.requestId, item.state]);
    expect(after).toEqual(before);
  });
});
