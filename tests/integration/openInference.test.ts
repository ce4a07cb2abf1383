import path from "node:path";
import { expect, it, describe } from "vitest";
import type { Scenario } from "../helpers/anthropicMock";
import { installedOpenInference } from "../helpers/clients";
import { instrumentedApps } from "../helpers/instrumentedApp";
import { factsOf, receivedOverMcp, timelineOutline, timelineTitle } from "../helpers/mcpAgent";

// The Anthropic SDK traced by OpenInference's instrumentation (both pinned, from the npm registry),
// in an application (tests/helpers/workers/openInferenceApp.cjs) whose tracer provider exports over
// OTLP/HTTP to a real dashboard's receiver, calling the Messages API mock: a call is one call
// (OpenInference's LLM span and the SDK's own span inside it told once), an agent (traceAgent) with
// its tool (traceTool) one agent's run.
const apps = instrumentedApps("openInference", () => void installedOpenInference());
const runApp = (scenario: string, mock: Scenario) =>
  apps.run(`openinference-${scenario}`, path.join(installedOpenInference(), "node_modules"), mock, [scenario]);
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

describe("OpenInference's Anthropic instrumentation", () => {
  it("a call: one model call, completed, its model and tokens counted once", async () => {
    const run = await runApp("plain", "text");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    const { row, view } = await lifecycleOf(run.service, "Anthropic Messages");
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^call-\d+$/), state: "completed", model: "claude-sonnet-4-5", tokens: 150 });
    expect(view.note).toBe("1 model call, 120 in / 30 out tokens, $0.0008 estimated");
    // Over MCP: its one call once, though two spans told of it.
    const mcp = await overMcp(row.requestId);
    expect(mcp.facts).toMatchObject({ "Model calls": "1", Cost: "$0.0008 estimated" });
    expect(mcp.calls).toEqual([expect.stringMatching(timelineTitle("model call, claude-sonnet-4-5"))]);
  });

  it("an agent whose model asks for a tool: one run of two calls and one tool", async () => {
    const run = await runApp("tool", "tool");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    expect(run.calls).toBe(2);
    const { row, view } = await lifecycleOf(run.service, "shell-agent");
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^agent-\d+$/), state: "completed", tokens: 300 });
    expect(view.note).toBe("2 model calls, 1 tool use, 240 in / 60 out tokens, $0.0016 estimated");
    expect(view.request).toMatchObject({ prompt: "say hi with bash", output: "Hello from the mock." });
    const mcp = await overMcp(row.requestId);
    expect(mcp.facts).toMatchObject({ "Model calls": "2", "Tool uses": "1", Cost: "$0.0016 estimated" });
    expect(mcp.calls).toHaveLength(2);
    expect(mcp.tools).toEqual([expect.stringMatching(timelineTitle("tool, Bash"))]);
  });

  it("529 every time: one call, failed with the error, after two attempts", async () => {
    const run = await runApp("error", "overloaded");
    expect(run.stdout).toContain("failed: 529");
    expect(run.calls).toBe(2);
    const { row, view } = await lifecycleOf(run.service, "Anthropic Messages");
    expect(row).toMatchObject({ state: "failed", attempt: 2 });
    expect(view.request.error).toMatch(/529/);
    expect(view.note).toBe("1 model call");
    // Over MCP: failed with the SDK's error, after the two attempts the mock refused, one call.
    const mcp = await overMcp(row.requestId);
    expect(mcp.facts).toMatchObject({ Attempts: "2", Error: view.request.error });
    expect(mcp.calls).toEqual([expect.stringMatching(/^model call, claude-sonnet-4-5, \d+(\.\d+)? m?s, 2 attempts, failed: .*529/)]);
    expect(mcp.story).toContain(`Error: ${view.request.error}`);
  });

  it("a call its caller aborts: failed, saying plainly the caller aborted it (the SDK's APIUserAbortError)", async () => {
    const run = await runApp("aborted", "hang");
    expect(run.stdout).toContain("failed:  Request was aborted.");
    const { row, view } = await lifecycleOf(run.service, "Anthropic Messages");
    expect(row).toMatchObject({ state: "failed" });
    expect(view.request.error).toBe("aborted by the caller: Request was aborted.");
  });
});
