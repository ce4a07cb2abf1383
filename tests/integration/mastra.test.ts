import path from "node:path";
import { expect, it, describe } from "vitest";
import type { Scenario } from "../helpers/anthropicMock";
import { installedMastra } from "../helpers/clients";
import { instrumentedApps } from "../helpers/instrumentedApp";
import { factsOf, receivedOverMcp, timelineOutline, timelineTitle } from "../helpers/mcpAgent";

// A Mastra agent (pinned, from the npm registry; its model the AI SDK's Anthropic provider) in an
// application (tests/helpers/workers/mastraApp.cjs) whose observability exports over OTLP/HTTP to a
// real dashboard's receiver (@mastra/otel-exporter), calling the Messages API mock: each generate is
// one agent's run with its steps' calls and tools; an error only on the agent fails it.
const apps = instrumentedApps("mastra", () => void installedMastra());
const runApp = (scenario: string, mock: Scenario) => apps.run(`mastra-${scenario}`, path.join(installedMastra(), "node_modules"), mock, [scenario]);
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

describe("Mastra", () => {
  it("an agent's generate: one run, completed, its call's model and tokens", async () => {
    const run = await runApp("plain", "text");
    expect(run.stdout, run.stderr).toContain("1 steps: Hello from the mock.");
    const { row, view } = await lifecycleOf(run.service, "invoke_agent shell-agent");
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^agent-\d+$/), state: "completed", model: "claude-sonnet-4-5", tokens: 150 });
    expect(view.note).toBe("1 model call, 120 in / 30 out tokens, $0.0008 estimated");
  });

  it("the model asks for a tool: one run of two calls and one tool", async () => {
    const run = await runApp("tool", "tool");
    expect(run.stdout, run.stderr).toContain("2 steps: Hello from the mock.");
    expect(run.calls).toBe(2);
    const { row, view } = await lifecycleOf(run.service, "invoke_agent shell-agent");
    expect(row).toMatchObject({ state: "completed", tokens: 300 });
    expect(view.note).toBe("2 model calls, 1 tool use, 240 in / 60 out tokens, $0.0016 estimated");
    // Over MCP: both calls and the tool, once each.
    const mcp = await overMcp(row.requestId);
    expect(mcp.facts).toMatchObject({ "Model calls": "2", "Tool uses": "1", Cost: "$0.0016 estimated" });
    expect(mcp.calls).toHaveLength(2);
    expect(mcp.tools).toEqual([expect.stringMatching(timelineTitle("tool, Bash"))]);
  });

  it("529 every time: the run failed with the error its agent span says", async () => {
    const run = await runApp("error", "overloaded");
    expect(run.stdout).toContain("failed: Overloaded");
    const { row, view } = await lifecycleOf(run.service, "invoke_agent shell-agent");
    expect(row).toMatchObject({ state: "failed" });
    expect(view.request.error).toBe("Error: Overloaded");
    // Over MCP: failed with the agent's error; its model call failed too.
    const mcp = await overMcp(row.requestId);
    expect(mcp.facts).toMatchObject({ State: "failed", Error: "Error: Overloaded" });
    expect(mcp.calls).toEqual([expect.stringMatching(/^model call, claude-sonnet-4-5, [^,]+, failed: /)]);
    expect(mcp.story).toContain("Error: Error: Overloaded");
  });
});
