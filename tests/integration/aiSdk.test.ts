import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Scenario } from "../helpers/anthropicMock";
import { installedAiSdk } from "../helpers/clients";
import { instrumentedApps } from "../helpers/instrumentedApp";
import { factsOf, receivedOverMcp, timelineOutline } from "../helpers/mcpAgent";

// The Vercel AI SDK (pinned, from the npm registry) with its Anthropic provider, in an application
// (tests/helpers/workers/aiSdkApp.cjs) whose tracer provider exports over OTLP/HTTP to a real
// dashboard's receiver, calling the Messages API mock: each generateText or streamText shows as one
// agent's run with its model calls and tools, as the SDK did them. The 6 with
// experimental_telemetry, the 7 with @ai-sdk/otel's OpenTelemetry (the GenAI conventions) and its
// LegacyOpenTelemetry (the 6's spans).
const apps = instrumentedApps("aiSdk", () => {
  installedAiSdk(6);
  installedAiSdk(7);
});

const MOCK: Record<string, Scenario> = {
  plain: "text",
  tool: "tool",
  retried: "overloaded-twice",
  exhausted: "overloaded",
  aborted: "stall",
  "aborted-call": "hang",
};

/** The application run once: what it printed, and what the mock was asked. */
const runApp = (integration: string, scenario: string) =>
  apps.run(`ai-sdk-${integration}-${scenario}`, path.join(installedAiSdk(integration === "6" ? 6 : 7), "node_modules"), MOCK[scenario]!, [
    integration,
    scenario,
  ]);

/** The service's lifecycles once its run has arrived (an agent's), and the run's page. */
const runOf = (service: string) => apps.lifecyclesOf(service, (items) => items.some((item) => item.requestId.startsWith("agent-")));

describe.each([["6"], ["7"], ["7-legacy"]])("the AI SDK %s", (integration) => {
  it("a plain prompt: one run, completed, its one call's model and tokens", async () => {
    const run = await runApp(integration, "plain");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    const { rows, row, view } = await runOf(run.service);
    expect(rows).toHaveLength(1);
    expect(row).toMatchObject({ requestId: expect.stringMatching(/^agent-\d+$/), state: "completed", model: "claude-sonnet-4-5", tokens: 150 });
    expect(view.note).toBe("1 model call, 120 in / 30 out tokens, $0.0008 estimated");
  });

  it("a tool loop of two steps: one run of two calls and one tool, each step inside it", async () => {
    const run = await runApp(integration, "tool");
    expect(run.stdout, run.stderr).toContain("2 steps: Hello from the mock.");
    expect(run.calls).toBe(2);
    const { rows, row, view } = await runOf(run.service);
    expect(rows).toHaveLength(1);
    expect(row).toMatchObject({ state: "completed", tokens: 300 });
    expect(view.note).toBe("2 model calls, 1 tool use, 240 in / 60 out tokens, $0.0016 estimated");
    const steps = view.steps!;
    expect(steps.filter((step) => /Bash/.test(`${step.name} ${step.summary}`))).toHaveLength(1);
  });

  it("529 twice, then an answer: completed, one call", async () => {
    const run = await runApp(integration, "retried");
    expect(run.stdout, run.stderr).toContain("Hello from the mock.");
    expect(run.calls).toBe(3);
    const { row, view } = await runOf(run.service);
    expect(row).toMatchObject({ state: "completed", tokens: 150 });
    expect(view.note).toBe("1 model call, 120 in / 30 out tokens, $0.0008 estimated");
    // The 6 makes a span per attempt; the 7 retries inside one span and says nothing of a retry that worked.
    if (integration === "6") expect(row).toMatchObject({ attempt: 3 });
    // Over MCP: completed, no error; the 6's three tries, two refused with the API's words, then the answer.
    const lifecycle = await receivedOverMcp.lifecycle(await apps.mcp(), row.requestId);
    expect(lifecycle.request.error).toBeUndefined();
    expect(factsOf(lifecycle)).toMatchObject({ State: "completed", Cost: "$0.0008 estimated" });
    const calls = timelineOutline(lifecycle).filter((line) => line.trim().startsWith("model call, "));
    if (integration === "6") {
      expect(factsOf(lifecycle).Attempts).toBe("3");
      expect(calls).toEqual([
        expect.stringContaining("failed: AI_APICallError: Overloaded"),
        expect.stringContaining("failed: AI_APICallError: Overloaded"),
        expect.not.stringContaining("failed"),
      ]);
    } else expect(calls).toEqual([expect.not.stringContaining("failed")]);
  });

  it("529 every time, retries exhausted: failed with the error, after its three attempts", async () => {
    const run = await runApp(integration, "exhausted");
    expect(run.stdout).toContain("failed: Failed after 3 attempts");
    const { row, view } = await runOf(run.service);
    expect(row).toMatchObject({ state: "failed", attempt: 3 });
    expect(view.request.error).toMatch(/Failed after 3 attempts\. Last error: (AI_APICallError: )?Overloaded/);
    // Over MCP: failed with the SDK's error, after the three attempts the mock refused.
    const [listed] = (await receivedOverMcp.rows(await apps.mcp(), { workspace: run.service })).items;
    expect(listed).toMatchObject({ requestId: row.requestId, state: "failed", attempt: 3 });
    const lifecycle = await receivedOverMcp.lifecycle(await apps.mcp(), row.requestId);
    expect(factsOf(lifecycle)).toMatchObject({ Attempts: "3", Error: view.request.error });
    expect(
      timelineOutline(lifecycle)
        .filter((line) => line.trim().startsWith("model call, "))
        .every((line) => line.includes(", failed: ")),
    ).toBe(true);
    const story = await receivedOverMcp.story(await apps.mcp(), row.requestId);
    expect(story).toContain("Attempt 3.");
    expect(story).toContain(`Error: ${view.request.error}`);
  });

  it("a stream aborted after its first words: failed as aborted, not completed", async () => {
    const run = await runApp(integration, "aborted");
    expect(run.stdout, run.stderr).toContain('aborted after "Hello"');
    const { row, view } = await runOf(run.service);
    expect(row).toMatchObject({ state: "failed" });
    expect(view.request.error).toMatch(/aborted/);
    // Over MCP: failed, saying it was aborted (the wording is the mapping's: the SDK only ends the span).
    const lifecycle = await receivedOverMcp.lifecycle(await apps.mcp(), row.requestId);
    expect(lifecycle.request).toMatchObject({ state: "failed", error: view.request.error });
    expect(await receivedOverMcp.story(await apps.mcp(), row.requestId)).toContain(`Error: ${view.request.error}`);
  });

  it("a call its caller aborts (its abort signal): failed, saying plainly that the caller aborted it, with the SDK's message", async () => {
    const run = await runApp(integration, "aborted-call");
    expect(run.stdout, run.stderr).toMatch(/^failed: (This operation was aborted|The operation was aborted)/m);
    const { row, view } = await runOf(run.service);
    expect(row).toMatchObject({ state: "failed" });
    expect(view.request.error).toMatch(/^aborted by the caller: (This operation was aborted|The operation was aborted)/);
  });
});
