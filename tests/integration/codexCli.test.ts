import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import type { RequestsView } from "../../lib/views/requestsView";
import { CLIENTS, installedClient } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { anAgent, closeAgents, factsOf, receivedOverMcp, timelineOutline } from "../helpers/mcpAgent";
import { anOpenAiResponsesMock, MOCK_ANSWER, type ResponsesScenario } from "../helpers/openAiResponsesMock";
import { eventually, waitForExit, withOutput } from "../helpers/processes";
import { writeCodexConfig } from "../helpers/codexConfig";
import { tempParent } from "../helpers/stateDir";
import { everyItem, receivedTurns } from "../helpers/receivedTurns";

// The real Codex CLI (pinned, from the npm registry: its linux-x64 binary), run headless as
// `codex exec`, against a local stand-in for the Responses API, exporting its telemetry as its
// config docs say (an [otel] section) to the dashboard's receiver. What the dashboard's API shows is
// checked against what the CLI printed and what the mock saw.
const SETTINGS = { port: 0, keepMs: 86_400_000, stuckAfterMs: 2000 };
let codex: string;
let receiver: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
const { get, turnOf } = receivedTurns(() => dashboard);
let stateDir: string;

beforeAll(async () => {
  codex = path.join(installedClient(CLIENTS.codexCli), "node_modules/.bin/codex");
  stateDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-codex-")), "state");
  // A turn with nothing new for 2 s is stuck here (10 minutes by default).
  dashboard = await aDashboard({ stateDir }, SETTINGS, "file");
  receiver = (await dashboard.runtime.telemetry!.ready).url!;
}, 600_000);
afterAll(async () => {
  await closeAgents();
  await dashboard.close();
});

/** `reqwatch mcp` on the same state folder, as a coding agent asks it: one for the file. */
let agent: Awaited<ReturnType<typeof anAgent>> | undefined;
const mcp = async () => (agent ??= await anAgent(stateDir));
/** Codex sends no cost: its calls are estimated at list prices where their model is known, else unknown; never $0. */
const CODEX_COST = /^(unknown|\$0\.\d*[1-9]\d* estimated)$/;

/** A CODEX_HOME of its own: a model provider at the mock (its key from MOCK_OPENAI_KEY) and the [otel] section a user writes, pointed at the dashboard. */
function aCodexHome(apiUrl: string, options: { protocol?: "binary" | "json"; maxRetries?: number; traces?: boolean } = {}): string {
  const home = tempParent();
  writeCodexConfig(home, apiUrl, { receiver, protocol: options.protocol, maxRetries: options.maxRetries, traces: options.traces !== false, metrics: true });
  return home;
}

function startCodex(home: string, args: string[]): ChildProcess & { output: () => string } {
  const child = spawn(codex, ["exec", "--skip-git-repo-check", ...args], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      CODEX_HOME: home,
      MOCK_OPENAI_KEY: "test-key-for-the-mock",
      // The OpenTelemetry SDK's batch interval for log events (1 s by default), so a prompt or an attempt shows within a moment. The
      // spans all go as it exits: its exporter can drop the last ones when it exits in the middle of a periodic export (5 s by default).
      OTEL_BLRP_SCHEDULE_DELAY: "200",
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    } as Record<string, string | undefined> as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return withOutput(child);
}

async function runCodex(prompt: string, scenario: ResponsesScenario, options: Parameters<typeof aCodexHome>[1] = {}) {
  const api = await anOpenAiResponsesMock(scenario);
  try {
    const child = startCodex(aCodexHome(api.url, options), [prompt]);
    const code = await waitForExit(child);
    return { code, output: child.output(), calls: api.calls, others: api.others };
  } finally {
    await api.close();
  }
}

/** The session id `codex exec` prints in its header. */
const sessionIdOf = (output: string) => /session id: ([0-9a-f-]{36})/.exec(output)?.[1];

const inState = (state: string) => (row: { state: string }) => row.state === state;
const stepsOf = (view: SourceRequestView) => view.steps!.map((step) => `${step.name}: ${step.summary}`);

// Durations are written as the pages write them: "37 ms", or "1.1 s" when the machine is busy.
describe("Codex CLI, run for real, seen through its own telemetry", () => {
  it("a plain prompt is one turn of its session: completed, one model call with the tokens the CLI printed", async () => {
    const run = await runCodex("say hello, plainly", "text", { protocol: "json" });
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain(MOCK_ANSWER);
    // "tokens used 130": Codex counts the input it was not cached for and the output, as reqwatch does.
    expect(run.output).toMatch(/tokens used\s+130/);
    // Its spans and its logs come in exports of their own: the turn ends with the first, its last step comes with the second.
    const { row, view } = await turnOf(
      "say hello, plainly",
      (row, view) => row.state === "completed" && stepsOf(view).some((step) => step.startsWith("turn ended")),
    );
    expect(row).toMatchObject({
      requestId: expect.stringMatching(/^turn-\d+$/),
      workspace: "codex_exec",
      model: "gpt-5-codex",
      tokens: 130,
      attempt: 1,
      stuckReason: null,
      sessionId: sessionIdOf(run.output),
    });
    // Codex sends no cost: its call is of the turn's model, estimated at list prices.
    expect(row.note).toMatch(/^1 model call, 100 in \/ 30 out tokens, \$0\.\d+ estimated$/);
    const calls = everyItem(view.timeline!.items).filter((item) => item.kind === "call");
    expect(calls.map((call) => [call.name, call.summary])).toEqual([
      ["gpt-5-codex", expect.stringMatching(/^100 in \/ 30 out tokens, cache read 20, \$0\.\d+ estimated$/)],
    ]);
    // One bar for the call: its HTTP attempt and its answer's span, merged.
    expect(calls[0]!.records.map((record) => record.name)).toEqual(["api_request", "model call"]);
    expect(everyItem(view.timeline!.items).filter((item) => item.label === "api_request")).toEqual([]);
    expect(view.request).toMatchObject({ prompt: "say hello, plainly", state: "completed" });
    expect(view.request.error).toBeUndefined();
    expect(stepsOf(view)).toEqual([
      "user_prompt: a prompt of 18 characters",
      expect.stringMatching(/^api_request: attempt 1, 200, \d+(\.\d+)? m?s, \/responses$/),
      "model call: 100 in / 30 out, 20 cached, 5 reasoning",
      expect.stringMatching(/^turn ended: took \d+(\.\d+)? m?s$/),
    ]);
    expect(run.calls).toHaveLength(1);
    // Besides its one POST /v1/responses, Codex only tells the provider its turn ids (no models list with a provider of one's own).
    expect(run.others.filter((asked) => asked !== "POST /v1/analytics/codex/turn-costs")).toEqual([]);
  }, 120_000);

  it("a prompt that runs its shell tool: both model calls and the tool, its decision, command and result", async () => {
    const run = await runCodex("run echo hi, please", "tool");
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/echo hi[\s\S]*succeeded[\s\S]*\nhi\n/);
    expect(run.calls.map((call) => call.toolOutput)).toEqual([false, true]);
    const { row, view } = await turnOf("run echo hi, please", inState("completed"));
    expect(row.note).toMatch(/^2 model calls, 1 tool use, 200 in \/ 60 out tokens, \$0\.\d+ estimated$/);
    const steps = stepsOf(view);
    expect(steps).toContainEqual("tool_decision: exec_command, approved, by Config");
    expect(steps).toContainEqual(expect.stringMatching(/^tool exec_command: done, \d+(\.\d+)? m?s, from direct$/));
    expect(steps).toContainEqual(expect.stringMatching(/^tool_result: exec_command, ok, \d+(\.\d+)? m?s, args \{"cmd":"echo hi"\}$/));
    expect(steps.filter((step) => step.startsWith("model call: "))).toHaveLength(2);
    // Over MCP: the turn's one tool, and its session's.
    const lifecycle = await receivedOverMcp.lifecycle(await mcp(), row.requestId);
    expect(factsOf(lifecycle)).toMatchObject({ "Tool uses": "1", Cost: expect.stringMatching(CODEX_COST) });
    expect(timelineOutline(lifecycle).filter((line) => /^\s*tool, exec_command, \d+(\.\d+)? m?s/.test(line))).toHaveLength(1);
    const context = await receivedOverMcp.session(await mcp(), row.sessionId!);
    expect(context).toContain("received over OpenTelemetry from Codex CLI;");
    expect(context).toContain("Tools (1): exec_command (1)");
  }, 120_000);

  it("500 twice, then an answer: completed, one call, three attempts, the two failed ones shown", async () => {
    const run = await runCodex("answer after two errors", "error-twice");
    expect(run.code, run.output).toBe(0);
    expect(run.calls.map((call) => call.status)).toEqual([500, 500, 200]);
    const { row, view } = await turnOf("answer after two errors", inState("completed"));
    expect(row).toMatchObject({ attempt: 3, tokens: 130 });
    expect(row.note).toMatch(/^1 model call, 100 in \/ 30 out tokens, \$0\.\d+ estimated$/);
    const calls = everyItem(view.timeline!.items).filter((item) => item.kind === "call");
    expect(calls.map((call) => [call.attempts, call.error, call.records.map((record) => record.name)])).toEqual([
      [3, null, ["api_request", "api_request", "api_request", "model call"]],
    ]);
    expect(
      stepsOf(view)
        .filter((step) => step.startsWith("api_request: "))
        .map((step) => step.replace(/, \d+(\.\d+)? m?s/, "")),
    ).toEqual([
      "api_request: attempt 1, failed: 500, http 500, /responses",
      "api_request: attempt 2, failed: 500, http 500, /responses",
      "api_request: attempt 3, 200, /responses",
    ]);
    // Over MCP, as the mock saw it: on its third attempt, the two before it failed with their status, no error left.
    const [listed] = (await receivedOverMcp.rows(await mcp(), { text: "answer after two errors" })).items.filter((item) => item.requestId === row.requestId);
    expect(listed).toMatchObject({ state: "completed", attempt: 3 });
    const lifecycle = await receivedOverMcp.lifecycle(await mcp(), row.requestId);
    expect(lifecycle.request.error).toBeUndefined();
    expect(factsOf(lifecycle)).toMatchObject({ Attempts: "3", Cost: expect.stringMatching(CODEX_COST) });
    const story = await receivedOverMcp.story(await mcp(), row.requestId);
    expect(story).toContain("Attempt 3.");
    expect(story).not.toContain("Error:");
    expect(story.match(/api_request: attempt \d, failed: 500, http 500/g)).toEqual([
      "api_request: attempt 1, failed: 500, http 500",
      "api_request: attempt 2, failed: 500, http 500",
    ]);
  }, 120_000);

  it("500 until Codex gives up: the failed attempts it sent, then stuck, since `codex exec` exits on the error without sending the rest (the turn's end)", async () => {
    // The last attempt's answer is held until the dashboard shows the two before it, so what was sent before the exit is known.
    const api = await anOpenAiResponsesMock("error", { holdFrom: 3 });
    try {
      const child = startCodex(aCodexHome(api.url, { maxRetries: 2 }), ["fail until it gives up"]);
      const { row } = await turnOf("fail until it gives up", (item) => item.attempt === 2);
      // Not asked whether it is stuck yet: with 2 s to be stuck, a busy machine's first look can come after it.
      expect(row).toMatchObject({ state: "processing" });
      api.release();
      expect(await waitForExit(child), child.output()).toBe(1);
      expect(child.output()).toContain("ERROR:");
      expect(api.calls.map((call) => call.status)).toEqual([500, 500, 500]);
      const { row: stuck, view } = await turnOf("fail until it gives up", (item) => item.stuckReason !== null);
      // Whether the last attempt's event went out in a periodic batch before the exit is Codex's race; the turn's span never does.
      expect(stuck.state).toBe("processing");
      expect([2, 3]).toContain(stuck.attempt);
      expect(stuck.stuckReason).toMatch(
        new RegExp(
          `^nothing received for \\d+s; last: api_request: attempt ${stuck.attempt}, failed: 500, http 500, \\d+(\\.\\d+)? m?s, /responses \\(\\d+s ago\\)$`,
        ),
      );
      expect(view.request.error).toBe("500, http 500");
    } finally {
      await api.close();
    }
  }, 120_000);

  it("killed while the API never answers: processing, then stuck, saying what it last did", async () => {
    const api = await anOpenAiResponsesMock("hang");
    const child = startCodex(aCodexHome(api.url), ["wait for an answer that never comes"]);
    try {
      await turnOf("wait for an answer that never comes", inState("processing"));
      await eventually(() => (api.calls.length === 1 ? true : undefined), 30_000);
      const exited = waitForExit(child);
      child.kill("SIGKILL");
      await exited;
      const { row: stuck } = await turnOf("wait for an answer that never comes", (item) => item.stuckReason !== null);
      expect(stuck.state).toBe("processing");
      expect(stuck.stuckReason).toMatch(/^nothing received for \d+s; last: user_prompt: a prompt of 35 characters \(\d+s ago\)$/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await api.close();
    }
  }, 120_000);

  it("with no trace exporter (the log events alone, which then carry no trace): the conversation is one lifecycle, its prompt answered", async () => {
    const run = await runCodex("say hello, logs only", "text", { traces: false });
    expect(run.code, run.output).toBe(0);
    const { row, view } = await turnOf("say hello, logs only", inState("completed"));
    expect(row).toMatchObject({ model: "gpt-5-codex", attempt: 1, sessionId: sessionIdOf(run.output) });
    expect(row.note).toBe("1 model call, unknown");
    expect(stepsOf(view).map((step) => step.split(":")[0])).toEqual(["user_prompt", "api_request"]);
  }, 120_000);

  it("a conversation resumed (`codex exec resume --last`): its second prompt is a second turn of the same session", async () => {
    const api = await anOpenAiResponsesMock("text");
    try {
      const home = aCodexHome(api.url);
      const first = startCodex(home, ["first prompt of the session"]);
      expect(await waitForExit(first), first.output()).toBe(0);
      const second = startCodex(home, ["resume", "--last", "second prompt, resumed"]);
      expect(await waitForExit(second), second.output()).toBe(0);
      const session = sessionIdOf(first.output());
      expect(sessionIdOf(second.output())).toBe(session);
      await turnOf("second prompt, resumed", inState("completed"));
      const turns = await get<RequestsView>(`/api/requests?source=otel&session=${session}`);
      expect(turns.items.map((item) => [item.state, item.note]).sort()).toEqual([
        ["completed", expect.stringMatching(/^1 model call, 100 in \/ 30 out tokens, \$0\.\d+ estimated$/)],
        ["completed", expect.stringMatching(/^1 model call, 100 in \/ 30 out tokens, \$0\.\d+ estimated$/)],
      ]);
      expect(api.calls).toHaveLength(2);
      // An agent resuming it: one Codex CLI session of both turns.
      const context = await receivedOverMcp.session(await mcp(), session!);
      expect(context).toContain("received over OpenTelemetry from Codex CLI;");
      expect(context).toContain("2 turns");
      expect(context.match(/^ {2}- turn-\d+ completed: /gm)).toHaveLength(2);
    } finally {
      await api.close();
    }
  }, 120_000);
});
