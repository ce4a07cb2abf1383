import path from "node:path";
import { expect, it, describe } from "vitest";
import type { Scenario } from "../helpers/anthropicMock";
import { installedTraceloop } from "../helpers/clients";
import { instrumentedApps } from "../helpers/instrumentedApp";

// The Anthropic SDK traced by Traceloop's OpenLLMetry SDK (both pinned, from the npm registry), in an
// application (tests/helpers/workers/traceloopApp.cjs) whose SDK exports over OTLP/HTTP to a real
// dashboard's receiver (its baseUrl), calling the Messages API mock: a call is one call, an agent
// (withAgent) with its tool (withTool) one agent's run.
const apps = instrumentedApps("traceloop", () => void installedTraceloop());
const runApp = (scenario: string, mock: Scenario) => apps.run(`traceloop-${scenario}`, path.join(installedTraceloop(), "node_modules"), mock, [scenario]);
const { lifecycleOf } = apps;

describe("Traceloop's OpenLLMetry", () => {
  it("a call: one model call, completed, its model and tokens", async () => {
    const run = await runApp("plain", "text");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    const { row, view } = await lifecycleOf(run.service, "chat claude-sonnet-4-5");
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^call-\d+$/), state: "completed", model: "claude-sonnet-4-5", tokens: 150 });
    expect(view.note).toBe("1 model call, 120 in / 30 out tokens, $0.0008 estimated");
  });

  it("an agent whose model asks for a tool: one run of two calls and one tool", async () => {
    const run = await runApp("tool", "tool");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    expect(run.calls).toBe(2);
    const { row, view } = await lifecycleOf(run.service, "shell-agent.agent");
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^agent-\d+$/), state: "completed", tokens: 300 });
    expect(view.note).toBe("2 model calls, 1 tool use, 240 in / 60 out tokens, $0.0016 estimated");
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
