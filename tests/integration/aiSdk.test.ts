import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import { anAnthropicMock, type Scenario } from "../helpers/anthropicMock";
import { installedAiSdk } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { eventually, waitForExit } from "../helpers/processes";

// The Vercel AI SDK (pinned, from the npm registry) with its Anthropic provider, in an application
// (tests/helpers/workers/aiSdkApp.cjs) whose tracer provider exports over OTLP/HTTP to a real
// dashboard's receiver, calling the Messages API mock: each generateText or streamText shows as one
// agent's run with its model calls and tools, as the SDK did them. The 6 with
// experimental_telemetry, the 7 with @ai-sdk/otel's OpenTelemetry (the GenAI conventions) and its
// LegacyOpenTelemetry (the 6's spans).
const ROOT = path.resolve(__dirname, "../..");
const APP = path.join(ROOT, "tests/helpers/workers/aiSdkApp.cjs");
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
let receiver: string;
let parent: string;

beforeAll(async () => {
  installedAiSdk(6);
  installedAiSdk(7);
  parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-ai-sdk-"));
  dashboard = await aDashboard({ stateDir: path.join(parent, "state") }, { port: 0, keepMs: 86_400_000, stuckAfterMs: 600_000 }, "file");
  receiver = (await dashboard.runtime.telemetry!.ready).url!;
}, 600_000);
afterAll(async () => {
  await dashboard.close();
  fs.rmSync(parent, { recursive: true, force: true });
});

const MOCK: Record<string, Scenario> = { plain: "text", tool: "tool", retried: "overloaded-twice", exhausted: "overloaded", aborted: "stall" };

/** The application run once: what it printed, and what the mock was asked. */
async function runApp(integration: string, scenario: string) {
  const api = await anAnthropicMock(MOCK[scenario]!, { retryAfterMs: 10 });
  const service = `ai-sdk-${integration}-${scenario}`;
  try {
    const client = path.join(installedAiSdk(integration === "6" ? 6 : 7), "node_modules");
    // Not spawnSync: the mock and the receiver answer from this process.
    const app = spawn(process.execPath, [APP, receiver, api.url, service, client, path.join(ROOT, "node_modules"), integration, scenario], { stdio: ["ignore", "pipe", "pipe"] });
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

/** The service's lifecycles once its run has arrived (an agent's), and the run's page. */
async function runOf(service: string) {
  const rows = await eventually(async () => {
    const answer = await dashboard.ask(`/api/requests?source=otel&workspace=${service}`);
    expect(answer.status, answer.text).toBe(200);
    const items = answer.json<RequestsView>().items;
    return items.some((item) => item.requestId.startsWith("agent-")) ? items : undefined;
  }, 20_000);
  const view = (await dashboard.ask(`/api/sources/otel/requests/${rows[0]!.requestId}`)).json<SourceRequestView>();
  return { rows, row: rows[0]!, view };
}

describe.each([["6"], ["7"], ["7-legacy"]])("the AI SDK %s", (integration) => {
  it("a plain prompt: one run, completed, its one call's model and tokens", async () => {
    const run = await runApp(integration, "plain");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    const { rows, row, view } = await runOf(run.service);
    expect(rows).toHaveLength(1);
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^agent-\d+$/), state: "completed", model: "claude-sonnet-4-5", tokens: 150 });
    expect(view.note).toBe("1 model call, 120 in / 30 out tokens");
  });

  it("a tool loop of two steps: one run of two calls and one tool, each step inside it", async () => {
    const run = await runApp(integration, "tool");
    expect(run.stdout, run.stderr).toContain("2 steps: Hello from the mock.");
    expect(run.calls).toBe(2);
    const { rows, row, view } = await runOf(run.service);
    expect(rows).toHaveLength(1);
    expect(row).toMatchObject({ state: "completed", tokens: 300 });
    expect(view.note).toBe("2 model calls, 1 tool use, 240 in / 60 out tokens");
    const steps = view.steps!;
    expect(steps.filter((step) => /Bash/.test(`${step.name} ${step.summary}`))).toHaveLength(1);
  });

  it("529 twice, then an answer: completed, one call", async () => {
    const run = await runApp(integration, "retried");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    expect(run.calls).toBe(3);
    const { row, view } = await runOf(run.service);
    expect(row).toMatchObject({ state: "completed", tokens: 150 });
    expect(view.note).toBe("1 model call, 120 in / 30 out tokens");
    // The 6 makes a span per attempt; the 7 retries inside one span and says nothing of a retry that worked.
    if (integration === "6") expect(row).toMatchObject({ attempt: 3 });
  });

  it("529 every time, retries exhausted: failed with the error, after its three attempts", async () => {
    const run = await runApp(integration, "exhausted");
    expect(run.stdout).toContain("failed: Failed after 3 attempts");
    const { row, view } = await runOf(run.service);
    expect(row).toMatchObject({ state: "failed", attempt: 3 });
    expect(view.request.error).toMatch(/Failed after 3 attempts\. Last error: (AI_APICallError: )?Overloaded/);
  });

  it("a stream aborted after its first words: failed as aborted, not completed", async () => {
    const run = await runApp(integration, "aborted");
    expect(run.stdout, run.stderr).toContain('aborted after "Hello"');
    const { row, view } = await runOf(run.service);
    expect(row).toMatchObject({ state: "failed" });
    expect(view.request.error).toMatch(/aborted/);
  });
});
