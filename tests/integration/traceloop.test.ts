import path from "node:path";
import { expect, it, describe } from "vitest";
import type { Scenario } from "../helpers/anthropicMock";
import { installedTraceloop } from "../helpers/clients";
import { instrumentedApps } from "../helpers/instrumentedApp";
import { factsOf, receivedOverMcp, timelineOutline, timelineTitle } from "../helpers/mcpAgent";

// The Anthropic SDK traced by Traceloop's OpenLLMetry SDK (both pinned, from the npm registry), in an
// application (tests/helpers/workers/traceloopApp.cjs) whose SDK exports over OTLP/HTTP to a real
// dashboard's receiver (its baseUrl), calling the Messages API mock: a call is one call, an agent
// (withAgent) with its tool (withTool) one agent's run.
const apps = instrumentedApps("traceloop", () => void installedTraceloop());
const runApp = (scenario: string, mock: Scenario) => apps.run(`traceloop-${scenario}`, path.join(installedTraceloop(), "node_modules"), mock, [scenario]);
const { lifecycleOf } = apps;

/** What an agent reads of a lifecycle over MCP: its facts, and its timeline's model calls and tools. */
async function overMcp(requestId: string) {
  const lifecycle = await receivedOverMcp.lifecycle(await apps.mcp(), requestId);
  const outline = timelineOutline(lifecycle).map((line) => line.trim());
  return {
    lifecycle,
    facts: factsOf(lifecycle),
    calls: outline.filter((line) => line.startsWith("model call, ")),
    tools: outline.filter((line) => line.startsWith("tool, ")),
    story: await receivedOverMcp.story(await apps.mcp(), requestId),
  };
}

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
    // Over MCP: both calls and the tool, once each.
    const mcp = await overMcp(row.requestId);
    expect(mcp.facts).toMatchObject({ "Model calls": "2", "Tool uses": "1", Cost: "$0.0016 estimated" });
    expect(mcp.calls).toHaveLength(2);
    expect(mcp.tools).toEqual([expect.stringMatching(timelineTitle("tool, Bash"))]);
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
    // Over MCP: failed with the API's error, its one call failed.
    const mcp = await overMcp(row.requestId);
    expect(mcp.facts).toMatchObject({ State: "failed", Error: view.request.error });
    expect(mcp.calls).toEqual([expect.stringMatching(/^model call, claude-sonnet-4-5, \d+(\.\d+)? m?s, failed: .*529/)]);
    expect(mcp.story).toContain(`Error: ${view.request.error}`);
  });
});
