import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import { anAnthropicMock, type Scenario } from "../helpers/anthropicMock";
import { CLIENTS, installedClient } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { eventually, waitForExit } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";

// The official Anthropic SDK (pinned, from the npm registry) in an application that registers an
// OpenTelemetry tracer provider exporting over OTLP/HTTP to the dashboard's receiver: the SDK traces
// each call itself (a CLIENT span `anthropic.messages.create`), and each shows as a model call.
const ROOT = path.resolve(__dirname, "../..");
let client: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
let receiver: string;
let parent: string;

beforeAll(async () => {
  client = installedClient(CLIENTS.anthropicSdk);
  parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-sdk-"));
  dashboard = await aDashboard({ stateDir: path.join(parent, "state") }, { port: 0, keepMs: 86_400_000, stuckAfterMs: 600_000 }, "file");
  receiver = (await dashboard.runtime.telemetry!.ready).url!;
}, 300_000);
afterAll(async () => {
  await dashboard.close();
  fs.rmSync(parent, { recursive: true, force: true });
});

/** An application's script: its tracer provider (the OpenTelemetry SDK) registered, then one call through the Anthropic SDK. */
const APP = `
const [receiver, api, service, sdk, otel] = process.argv.slice(2);
const { BasicTracerProvider, BatchSpanProcessor } = require(otel + "/@opentelemetry/sdk-trace-base");
const { OTLPTraceExporter } = require(otel + "/@opentelemetry/exporter-trace-otlp-proto");
const { resourceFromAttributes } = require(otel + "/@opentelemetry/resources");
const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ "service.name": service }), spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver + "/v1/traces" }))] });
require(sdk + "/@opentelemetry/api").trace.setGlobalTracerProvider(provider);
const Anthropic = require(sdk + "/@anthropic-ai/sdk").default;
const client = new Anthropic({ baseURL: api, apiKey: "test-key-for-the-mock", maxRetries: 3 });
client.messages
  .create({ model: "claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
  .then((message) => console.log(message.content[0].text), (error) => console.log("failed:", error.status))
  .finally(() => provider.shutdown());
`;

async function runApp(service: string, scenario: Scenario) {
  const api = await anAnthropicMock(scenario);
  try {
    const script = path.join(tempParent(), "app.cjs");
    fs.writeFileSync(script, APP);
    // Not spawnSync: the stand-in API and the receiver answer from this process.
    const app = spawn(process.execPath, [script, receiver, api.url, service, path.join(client, "node_modules"), path.join(ROOT, "node_modules")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    app.stdout.on("data", (chunk) => (stdout += chunk));
    app.stderr.on("data", (chunk) => (stderr += chunk));
    await waitForExit(app);
    return { stdout, stderr };
  } finally {
    await api.close();
  }
}

async function callOf(service: string) {
  const row = await eventually(async () => {
    const answer = await dashboard.ask(`/api/requests?source=otel&workspace=${service}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.json<RequestsView>().items[0];
  }, 20_000);
  return { row, view: (await dashboard.ask(`/api/sources/otel/requests/${row.requestId}`)).json<SourceRequestView>() };
}

describe("the Anthropic SDK's own spans", () => {
  it("a call is a model call, completed, with its model, tokens and stop reason", async () => {
    const run = await runApp("sdk-app", "text");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    const { row, view } = await callOf("sdk-app");
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^call-\d+$/), state: "completed", model: "claude-sonnet-4-5", tokens: 150 });
    expect(view.steps!.map((step) => `${step.name}: ${step.summary}`)).toEqual([
      expect.stringMatching(/^anthropic\.messages\.create: claude-sonnet-4-5, 120 in \/ 30 out, \d+(\.\d+)? m?s, finish: end_turn$/),
    ]);
  });

  it("retried twice after 529: completed on its third attempt; retries exhausted: failed with the error", async () => {
    const retried = await runApp("sdk-retried", "overloaded-twice");
    expect(retried.stdout, retried.stderr).toContain("Hello from the mock.");
    const { row } = await callOf("sdk-retried");
    expect(row).toMatchObject({ state: "completed", attempt: 3 });
    const failed = await runApp("sdk-failed", "overloaded");
    expect(failed.stdout).toContain("failed: 529");
    const { row: failedRow, view } = await callOf("sdk-failed");
    expect(failedRow).toMatchObject({ state: "failed", attempt: 4 });
    expect(view.request.error).toMatch(/529/);
  });
});
