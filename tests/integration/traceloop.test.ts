import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import { anAnthropicMock, type Scenario } from "../helpers/anthropicMock";
import { installedTraceloop } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { eventually, waitForExit } from "../helpers/processes";

// The Anthropic SDK traced by Traceloop's OpenLLMetry SDK (both pinned, from the npm registry), in an
// application (tests/helpers/workers/traceloopApp.cjs) whose SDK exports over OTLP/HTTP to a real
// dashboard's receiver (its baseUrl), calling the Messages API mock: a call is one call, an agent
// (withAgent) with its tool (withTool) one agent's run.
const ROOT = path.resolve(__dirname, "../..");
const APP = path.join(ROOT, "tests/helpers/workers/traceloopApp.cjs");
let client: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
let receiver: string;
let parent: string;

beforeAll(async () => {
  client = path.join(installedTraceloop(), "node_modules");
  parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-traceloop-"));
  dashboard = await aDashboard({ stateDir: path.join(parent, "state") }, { port: 0, keepMs: 86_400_000, stuckAfterMs: 600_000 }, "file");
  receiver = (await dashboard.runtime.telemetry!.ready).url!;
}, 600_000);
afterAll(async () => {
  await dashboard.close();
  fs.rmSync(parent, { recursive: true, force: true });
});

async function runApp(scenario: string, mock: Scenario) {
  const api = await anAnthropicMock(mock, { retryAfterMs: 10 });
  const service = `traceloop-${scenario}`;
  try {
    // Not spawnSync: the mock and the receiver answer from this process.
    const app = spawn(process.execPath, [APP, receiver, api.url, service, client, path.join(ROOT, "node_modules"), scenario], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    app.stdout.on("data", (chunk) => (stdout += chunk));
    app.stderr.on("data", (chunk) => (stderr += chunk));
    await waitForExit(app);
    return { service, stdout, stderr, calls: api.calls.length };
  } finally {
    await api.close();
  }
}

/** The service's one lifecycle once the span that holds the rest (`name`) has arrived, and its page. */
async function lifecycleOf(service: string, name: string) {
  return eventually(async () => {
    const answer = await dashboard.ask(`/api/requests?source=otel&workspace=${service}`);
    expect(answer.status, answer.text).toBe(200);
    const items = answer.json<RequestsView>().items;
    if (items.length !== 1) return undefined;
    const view = (await dashboard.ask(`/api/sources/otel/requests/${items[0]!.requestId}`)).json<SourceRequestView>();
    return view.steps?.some((step) => step.name === name) ? { row: items[0]!, view } : undefined;
  }, 20_000);
}

describe("Traceloop's OpenLLMetry", () => {
  it("a call: one model call, completed, its model and tokens", async () => {
    const run = await runApp("plain", "text");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    const { row, view } = await lifecycleOf(run.service, "chat claude-sonnet-4-5");
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^call-\d+$/), state: "completed", model: "claude-sonnet-4-5", tokens: 150 });
    expect(view.note).toBe("1 model call, 120 in / 30 out tokens");
  });

  it("an agent whose model asks for a tool: one run of two calls and one tool", async () => {
    const run = await runApp("tool", "tool");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    expect(run.calls).toBe(2);
    const { row, view } = await lifecycleOf(run.service, "shell-agent.agent");
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^agent-\d+$/), state: "completed", tokens: 300 });
    expect(view.note).toBe("2 model calls, 1 tool use, 240 in / 60 out tokens");
  });

  it("529 every time: one call, failed with the error", async () => {
    const run = await runApp("error", "overloaded");
    expect(run.stdout).toContain("failed: 529");
    expect(run.calls).toBe(2);
    const { row, view } = await lifecycleOf(run.service, "chat claude-sonnet-4-5");
    // Its span says nothing of the SDK's retry.
    expect(row).toMatchObject({ state: "failed" });
    expect(view.request.error).toMatch(/529/);
    expect(view.note).toBe("1 model call");
  });
});
