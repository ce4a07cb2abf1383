import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import type { RequestsView } from "../../lib/views/requestsView";
import { CLIENTS, installedClient } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { aGeminiMock, geminiSettings, MOCK_ANSWER, TOOL_FILES, type GeminiScenario } from "../helpers/geminiMock";
import { anAgent, closeAgents, factsOf, receivedOverMcp, timelineOutline, timelineTitle } from "../helpers/mcpAgent";
import { eventually, waitForExit, withOutput } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { everyItem, receivedTurns } from "../helpers/receivedTurns";

// The real Gemini CLI (pinned, from the npm registry), run headless as a user runs it (`gemini -p`),
// against a local stand-in for the Gemini API, exporting its telemetry as its docs say (settings.json
// `telemetry`) to the dashboard's receiver. What the dashboard's API shows is checked against what
// the CLI did and what the mock saw.
const SETTINGS = { port: 0, keepMs: 86_400_000, stuckAfterMs: 2000 };
let gemini: string;
let receiver: string;
let stateDir: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
const { get, turnOf } = receivedTurns(() => dashboard);

beforeAll(async () => {
  gemini = path.join(installedClient(CLIENTS.geminiCli), "node_modules/.bin/gemini");
  stateDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-gemini-cli-")), "state");
  // A turn with nothing new for 2 s is stuck here (10 minutes by default).
  dashboard = await aDashboard({ stateDir }, SETTINGS, "file");
  receiver = (await dashboard.runtime.telemetry!.ready).url!;
}, 600_000);
afterAll(async () => {
  await closeAgents();
  await dashboard.close();
  fs.rmSync(path.dirname(stateDir), { recursive: true, force: true });
});

/** A fresh home for the CLI: its settings turn the telemetry on, to the dashboard's receiver; the tool scenario's file is in it. */
function aHome(): string {
  const home = tempParent();
  fs.mkdirSync(path.join(home, ".gemini"));
  fs.writeFileSync(path.join(home, TOOL_FILES.present), "a note\n");
  fs.writeFileSync(path.join(home, ".gemini", "settings.json"), JSON.stringify(geminiSettings(receiver)));
  return home;
}

function startGemini(home: string, apiUrl: string, args: string[]): ChildProcess {
  return spawn(gemini, args, {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      GEMINI_API_KEY: "test-key-for-the-mock",
      GOOGLE_GEMINI_BASE_URL: apiUrl,
      // A headless run refuses a folder the user has not trusted: its docs' way for automation.
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      // Its batches sent every half second (5 s by default), so a change shows within about a second.
      OTEL_BSP_SCHEDULE_DELAY: "500",
      OTEL_BLRP_SCHEDULE_DELAY: "500",
    } as Record<string, string | undefined> as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: the CLI starts itself again as a child, and a kill reaches both.
    detached: true,
  });
}

async function runGemini(scenario: GeminiScenario, prompts: string[]) {
  const api = await aGeminiMock(scenario);
  const home = aHome();
  const runs: { code: number | null; output: string }[] = [];
  try {
    for (const [i, prompt] of prompts.entries()) {
      const child = withOutput(startGemini(home, api.url, ["-p", prompt, ...(i > 0 ? ["--resume", "latest"] : [])]));
      runs.push({ code: await waitForExit(child), output: child.output() });
    }
    return { runs, calls: api.calls };
  } finally {
    await api.close();
  }
}

/** `reqwatch mcp` on the same state folder, as a coding agent asks it: one for the file. */
let agent: Awaited<ReturnType<typeof anAgent>> | undefined;
const mcp = async () => (agent ??= await anAgent(stateDir));
const OVERLOADED = "503 UNAVAILABLE: The model is overloaded. Please try again later.";

const summaries = (view: SourceRequestView) => view.steps!.map((step) => `${step.name}: ${step.summary}`);

describe("Gemini CLI, run for real, seen through its own telemetry", () => {
  it("a plain prompt is one turn: completed with its answer, the router's call and the main model's, tokens (cached too), its session", async () => {
    const { runs, calls } = await runGemini("text", ["say hello, plainly"]);
    expect(runs[0]!.code, runs[0]!.output).toBe(0);
    expect(runs[0]!.output).toContain(MOCK_ANSWER);
    expect(calls.map((call) => (call.router ? "router" : "main"))).toEqual(["router", "main"]);
    const { row, view } = await turnOf("say hello, plainly", "completed");
    expect(row).toMatchObject({
      requestId: expect.stringMatching(/^turn-\d+$/),
      workspace: "gemini-cli",
      model: calls[1]!.model,
      tokens: 190,
      stuckReason: null,
      attempt: null,
    });
    expect(row.note).toMatch(/^2 model calls, 150 in \/ 40 out tokens, \$0\.0002 estimated/);
    expect(view.request).toMatchObject({ prompt: "say hello, plainly", output: MOCK_ANSWER, state: "completed" });
    const steps = summaries(view);
    expect(steps[0]).toBe("user_prompt: a prompt of 18 characters");
    expect(steps).toContainEqual(expect.stringMatching(new RegExp(`^api_response: router, ${calls[0]!.model}, 50 in / 10 out`)));
    expect(steps).toContainEqual(expect.stringMatching(new RegExp(`^api_response: main, ${calls[1]!.model}, 100 in / 30 out \\(20 cached\\)`)));
    expect(steps.at(-1)).toMatch(/^run ended: /);
    // The session is Gemini CLI's own: its turns are filtered by it.
    const session = await get<RequestsView>(`/api/requests?source=otel&session=${row.sessionId}`);
    expect(session.items.map((item) => item.requestId)).toEqual([row.requestId]);
    // An agent asking of the session: each model's calls under that model, the router's classifier too.
    const context = await receivedOverMcp.session(await mcp(), row.sessionId!);
    expect(context).toContain("received over OpenTelemetry from Gemini CLI");
    expect(context).toMatch(new RegExp(`  - ${calls[1]!.model}: 1 call, 100 in / 30 out tokens, \\$0\\.\\d+ estimated`));
    expect(context).toMatch(new RegExp(`  - ${calls[0]!.model}: 1 call, 50 in / 10 out tokens, \\$0\\.\\d+ estimated`));
    expect(context).toContain(`  - ${row.requestId} completed: 2 model calls, 150 in / 40 out tokens`);
  }, 120_000);

  it("a prompt that runs tools: one turn with its model calls and both tools, the one that failed with its error", async () => {
    const { runs } = await runGemini("tool", ["read the two files, please"]);
    expect(runs[0]!.code, runs[0]!.output).toBe(0);
    expect(runs[0]!.output).toContain(MOCK_ANSWER);
    const { row, view } = await turnOf("read the two files, please", "completed");
    expect(row.note).toMatch(/^3 model calls, 2 tool uses, 250 in \/ 70 out tokens, \$0\.0004 estimated$/);
    const steps = summaries(view);
    expect(steps).toContainEqual(expect.stringMatching(/^tool_call: read_file, accept, ok, \d+(\.\d+)? m?s$/));
    expect(steps).toContainEqual(expect.stringMatching(new RegExp(`^tool_call: read_file, accept, failed: File not found: .*${TOOL_FILES.missing}`)));
    expect(steps).toContainEqual(expect.stringMatching(/^tools scheduled: done/));
    expect(steps.filter((step) => step.startsWith("tool read_file: "))).toHaveLength(2);
    // Two tools of one name in one batch: nothing either record carries says which span is which event's, so each stays a tool of its own (never one).
    expect(everyItem(view.timeline!.items).filter((item) => item.kind === "tool")).toHaveLength(2);
    // Over MCP: the turn's tools, the missing file's with its error; the session's tools.
    const lifecycle = await receivedOverMcp.lifecycle(await mcp(), row.requestId);
    expect(factsOf(lifecycle)).toMatchObject({ "Model calls": "3", "Tool uses": "2", Cost: expect.stringMatching(/^\$0\.0004 estimated$/) });
    const outline = timelineOutline(lifecycle);
    expect(outline).toContainEqual(expect.stringMatching(timelineTitle("tool, read_file", `, failed: File not found: .*${TOOL_FILES.missing}`)));
    expect(
      outline.filter((line) => timelineTitle("tool, read_file").test(line)),
      outline.join("\n"),
    ).toHaveLength(1);
    expect(await receivedOverMcp.session(await mcp(), row.sessionId!)).toContain("Tools (1): read_file (2, 1 failed)");
  }, 120_000);

  it("a prompt that runs one tool: the tool is one bar on its timeline, its span (no call id) and its tool_call event merged", async () => {
    const { runs } = await runGemini("one-tool", ["read the note, please"]);
    expect(runs[0]!.code, runs[0]!.output).toBe(0);
    // Once the tool's span has arrived (spans and log events go in batches of their own).
    const view = await eventually(async () => {
      const { view } = await turnOf("read the note, please", "completed");
      return summaries(view).some((step) => step.startsWith("tool read_file: ")) ? view : undefined;
    }, 30_000);
    const tools = everyItem(view.timeline!.items).filter((item) => item.kind === "tool");
    expect(tools.map((tool) => [tool.name, tool.error, tool.records.map((record) => record.name).sort()])).toEqual([
      ["read_file", null, ["tool read_file", "tool_call"]],
    ]);
    expect(everyItem(view.timeline!.items).filter((item) => item.label === "tool read_file")).toEqual([]);
  }, 120_000);

  it("503 twice, then an answer: completed, with the attempts it took and each failure's status", async () => {
    const { runs, calls } = await runGemini("unavailable-twice", ["answer after two 503s"]);
    expect(runs[0]!.code, runs[0]!.output).toBe(0);
    expect(calls.filter((call) => !call.router).map((call) => call.status)).toEqual([503, 503, 200]);
    const { row, view } = await turnOf("answer after two 503s", "completed");
    expect(row.attempt).toBe(3);
    expect(view.request.error ?? null).toBeNull();
    expect(summaries(view).filter((step) => step.startsWith("api_error: "))).toEqual([
      expect.stringMatching(/^api_error: main, .*, 503 UNAVAILABLE: The model is overloaded/),
      expect.stringMatching(/^api_error: main, .*, 503 UNAVAILABLE: The model is overloaded/),
    ]);
    // Over MCP, as the mock saw it: the row on its third attempt; the main model's calls 503, 503, then answered; no error.
    const [listed] = (await receivedOverMcp.rows(await mcp(), { text: "answer after two 503s" })).items.filter((item) => item.requestId === row.requestId);
    expect(listed).toMatchObject({ state: "completed", attempt: 3 });
    const lifecycle = await receivedOverMcp.lifecycle(await mcp(), row.requestId);
    expect(lifecycle.request.error ?? null).toBeNull();
    expect(factsOf(lifecycle)).toMatchObject({ Attempts: "3", Cost: expect.stringMatching(/^\$0\.0002 estimated$/) });
    expect(factsOf(lifecycle).Error).toBeUndefined();
    const main = timelineOutline(lifecycle).filter((line) => line.includes(`model call, ${calls.at(-1)!.model}, `));
    expect(main).toEqual([
      expect.stringContaining(`failed: ${OVERLOADED}`),
      expect.stringContaining(`failed: ${OVERLOADED}`),
      expect.not.stringContaining("failed"),
    ]);
    expect(timelineOutline(lifecycle)).toContainEqual(expect.stringMatching(timelineTitle(`model call, ${calls[0]!.model.replace(/\./g, "\\.")}, router`)));
    const story = await receivedOverMcp.story(await mcp(), row.requestId);
    expect(story).toContain("Attempt 3.");
    expect(story).not.toContain("Error:");
  }, 120_000);

  it("503 until it gives up: failed with the API's error, the attempts made", async () => {
    const { runs, calls } = await runGemini("unavailable", ["unavailable until it gives up"]);
    expect(runs[0]!.code).not.toBe(0);
    const failed = calls.filter((call) => !call.router && call.status === 503).length;
    expect(failed).toBe(3);
    const { row, view } = await turnOf("unavailable until it gives up", "failed");
    expect(view.request.error).toBe("503 UNAVAILABLE: The model is overloaded. Please try again later.");
    expect(row.attempt).toBe(failed);
    expect(summaries(view).filter((step) => step.startsWith("api_error: "))).toHaveLength(failed);
    // Over MCP: failed with the API's words, after as many attempts as the mock refused.
    const lifecycle = await receivedOverMcp.lifecycle(await mcp(), row.requestId);
    expect(lifecycle.request).toMatchObject({ state: "failed", error: OVERLOADED });
    expect(factsOf(lifecycle)).toMatchObject({ Attempts: String(failed), Error: OVERLOADED });
    expect(timelineOutline(lifecycle).filter((line) => line.includes(`failed: ${OVERLOADED}`))).toHaveLength(failed);
    const story = await receivedOverMcp.story(await mcp(), row.requestId);
    expect(story).toContain(`Attempt ${failed}.`);
    expect(story).toContain(`Error: ${OVERLOADED}`);
  }, 120_000);

  it("a turn killed mid-call (the API never answered): processing, then stuck, saying what it last did", async () => {
    const api = await aGeminiMock("hang");
    const child = startGemini(aHome(), api.url, ["-p", "wait for an answer that never comes"]);
    try {
      // Not asked whether it is stuck yet: with 2 s to be stuck, a busy machine's first look can come after it.
      const { row } = await turnOf("wait for an answer that never comes", "processing");
      // Killed once the main call's request is in (the router's call came first), as the mock saw it.
      await eventually(
        async () =>
          summaries(await get<SourceRequestView>(`/api/sources/otel/requests/${row.requestId}`)).some((step) => step.startsWith("api_request: main"))
            ? true
            : undefined,
        30_000,
      );
      expect(api.calls.filter((call) => !call.router)).toHaveLength(1);
      const exited = waitForExit(child);
      process.kill(-child.pid!, "SIGKILL");
      await exited;
      const stuck = await eventually(async () => {
        const page = await get<RequestsView>(`/api/requests?source=otel&text=${encodeURIComponent("wait for an answer that never comes")}`);
        return page.items.find((item) => item.requestId === row.requestId && item.stuckReason !== null);
      }, 30_000);
      expect(stuck.state).toBe("processing");
      expect(stuck.stuckReason).toMatch(/^nothing received for \d+s; last: api_request: main, gemini-[\w.-]+ \(\d+s ago\)$/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
      await api.close();
    }
  }, 120_000);

  it("two prompts in one session (the second run resuming it): two turns of that session", async () => {
    const { runs } = await runGemini("text", ["first prompt of the session", "second prompt of the session"]);
    for (const run of runs) expect(run.code, run.output).toBe(0);
    const { row: first } = await turnOf("first prompt of the session", "completed");
    const { row: second } = await turnOf("second prompt of the session", "completed");
    expect(second.requestId).not.toBe(first.requestId);
    expect(second.sessionId).toBe(first.sessionId);
    const session = await get<RequestsView>(`/api/requests?source=otel&session=${first.sessionId}`);
    expect(session.items.map((item) => item.requestId).sort()).toEqual([first.requestId, second.requestId].sort());
    // An agent resuming it: both turns of the one session.
    const context = await receivedOverMcp.session(await mcp(), first.sessionId!);
    expect(context).toContain("2 turns");
    expect(context).toContain(`  - ${first.requestId} completed`);
    expect(context).toContain(`  - ${second.requestId} completed`);
  }, 120_000);
});
