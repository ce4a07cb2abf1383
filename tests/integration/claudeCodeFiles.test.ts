import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import type { TimelineItem } from "../../lib/views/timelineView";
import { anAnthropicMock, type Scenario } from "../helpers/anthropicMock";
import { anAgent, call, closeAgents } from "../helpers/mcpAgent";
import { CLIENTS, installedClient } from "../helpers/clients";
import { runCli } from "../helpers/cli";
import { aDashboard } from "../helpers/dashboard";
import { eventually, waitForExit } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";
import { receivedTurns } from "../helpers/receivedTurns";

// The real Claude Code CLI (pinned, from the npm registry), run headless as a user runs it, with its
// telemetry OFF, against a local stand-in for the Messages API: the dashboard reads the session files
// it writes into its folder (CLAUDE_CONFIG_DIR, a temp folder here) and shows each run as the CLI did
// it, through its API. One run also exports its telemetry, and is one turn with each call once.
let claude: string;
let claudeDir: string;
let stateDir: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
const { get, turnsOf, turnOf } = receivedTurns(() => dashboard);
/** A turn with nothing written for 3 s is stuck here (10 minutes by default). */
const STUCK_AFTER_MS = 3000;

beforeAll(async () => {
  claude = path.join(installedClient(CLIENTS.claudeCode), "node_modules/.bin/claude");
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-claude-files-"));
  stateDir = path.join(parent, "state");
  claudeDir = path.join(parent, "claude");
  dashboard = await aDashboard({ stateDir }, { port: 0, keepMs: 86_400_000, stuckAfterMs: STUCK_AFTER_MS, claudeDir }, "file");
}, 600_000);
afterAll(async () => {
  await dashboard.close();
  fs.rmSync(path.dirname(stateDir), { recursive: true, force: true });
});

function startClaude(prompt: string, apiUrl: string, options: { env?: Record<string, string>; args?: string[] } = {}): ChildProcess {
  const home = tempParent();
  return spawn(claude, ["-p", prompt, "--model", "claude-sonnet-4-5", ...(options.args ?? [])], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      // Every run's files in the one folder the dashboard reads; no telemetry.
      CLAUDE_CONFIG_DIR: claudeDir,
      ANTHROPIC_BASE_URL: apiUrl,
      ANTHROPIC_API_KEY: "test-key-for-the-mock",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      ...options.env,
    } as Record<string, string | undefined> as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function runClaude(prompt: string, scenario: Scenario, options: Parameters<typeof startClaude>[2] = {}) {
  const api = await anAnthropicMock(scenario);
  try {
    const child = startClaude(prompt, api.url, options);
    let stdout = "";
    let output = "";
    child.stdout!.on("data", (chunk) => ((stdout += chunk), (output += chunk)));
    child.stderr!.on("data", (chunk) => (output += chunk));
    const code = await waitForExit(child);
    return { code, stdout, output, calls: api.calls };
  } finally {
    await api.close();
  }
}

/** A turn's calls and tools as its page's timeline draws them, each once. */
function drawn(view: SourceRequestView, kind: "call" | "tool"): TimelineItem[] {
  const all = (items: TimelineItem[]): TimelineItem[] => items.flatMap((item) => [item, ...all(item.children)]);
  return all(view.timeline!.items).filter((item) => item.kind === kind);
}

/** The session file the CLI wrote for a prompt (its name is the session's id). */
function transcriptOf(prompt: string): string {
  const projects = path.join(claudeDir, "projects");
  for (const project of fs.readdirSync(projects)) {
    for (const name of fs.readdirSync(path.join(projects, project))) {
      const file = path.join(projects, project, name);
      if (name.endsWith(".jsonl") && fs.readFileSync(file, "utf8").includes(JSON.stringify(prompt))) return file;
    }
  }
  throw new Error(`no transcript holds ${prompt}`);
}

describe("Claude Code, run for real with its telemetry off, seen through its own session files", () => {
  it("a plain prompt: one turn, completed with the answer the CLI printed, its model, tokens and estimated cost, in its session", async () => {
    const run = await runClaude("say hello, from the files", "text");
    expect(run.code, run.output).toBe(0);
    expect(run.calls).toHaveLength(1);
    const { row, view } = await turnOf("say hello, from the files", "completed");
    const session = path.basename(transcriptOf("say hello, from the files"), ".jsonl");
    expect(row).toMatchObject({ workspace: "claude-code", model: "claude-sonnet-4-5", tokens: 150, stuckReason: null, sessionId: session });
    expect(row.note).toMatch(/^1 model call, 120 in \/ 30 out tokens, /);
    expect(view.request).toMatchObject({ prompt: "say hello, from the files", output: run.stdout.trim().split("\n").at(-1), state: "completed" });
    expect(view.steps!.map((step) => step.name)).toEqual(["prompt", "model call"]);
    const inSession = await get<RequestsView>(`/api/requests?source=otel&session=${session}`);
    expect(inSession.items.map((item) => item.requestId)).toEqual([row.requestId]);
    // The CLI reads what the dashboard kept.
    const listed = runCli(["list", "--source", "otel"], { stateDir });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.split("\n").find((line) => line.includes(row.requestId))).toMatch(/completed/);
  }, 120_000);

  it("a prompt that runs a tool: both model calls the mock answered, the tool with its command, result and duration", async () => {
    const run = await runClaude("run echo hi, from the files", "tool", { args: ["--allowedTools", "Bash"] });
    expect(run.code, run.output).toBe(0);
    expect(run.calls).toHaveLength(2);
    const { row, view } = await turnOf("run echo hi, from the files", "completed");
    expect(row.note).toMatch(/^2 model calls, 1 tool use, 240 in \/ 60 out tokens/);
    const steps = view.steps!.map((step) => `${step.name}: ${step.summary}`);
    expect(steps).toContainEqual("tool Bash: asked for, $ echo hi");
    expect(steps).toContainEqual(expect.stringMatching(/^tool result: Bash, ok, \d+(\.\d+)? m?s$/));
    expect(drawn(view, "tool")).toEqual([expect.objectContaining({ name: "Bash", error: null, durationMs: expect.any(Number) })]);
    expect(drawn(view, "call")).toHaveLength(2);
  }, 120_000);

  it("529 twice, then an answer: one call, completed at its third attempt, the two 529s as steps", async () => {
    const run = await runClaude("answer after two overloads, from the files", "overloaded-twice", {
      env: { CLAUDE_CODE_OVERLOADED_RETRY_BASE_DELAY_MS: "50" },
    });
    expect(run.code, run.output).toBe(0);
    expect(run.calls).toHaveLength(3);
    const { row, view } = await turnOf("answer after two overloads, from the files", "completed");
    expect(row).toMatchObject({ attempt: 3 });
    expect(row.note).toMatch(/^1 model call, /);
    expect(view.steps!.filter((step) => step.name === "api error").map((step) => step.summary)).toEqual([
      expect.stringMatching(/^529 Overloaded, attempt 1 of 11/),
      expect.stringMatching(/^529 Overloaded, attempt 2 of 11/),
    ]);
  }, 120_000);

  it("a run that waits on a hung API is stuck waiting on the model; killed, it is stuck saying its process ended mid-turn", async () => {
    const api = await anAnthropicMock("hang");
    const child = startClaude("wait for an answer that never comes, from the files", api.url);
    try {
      const waiting = await eventually(
        async () => (await turnsOf("wait for an answer that never comes, from the files")).find((item) => item.stuckReason !== null),
        60_000,
      );
      expect(waiting.state).toBe("processing");
      expect(waiting.stuckReason).toMatch(/^waiting on the model for \d+s$/);
      const exited = waitForExit(child);
      child.kill("SIGKILL");
      await exited;
      // The session file it left says busy, under its pid.
      expect(JSON.parse(fs.readFileSync(path.join(claudeDir, "sessions", `${child.pid}.json`), "utf8"))).toMatchObject({ status: "busy" });
      const ended = await eventually(
        async () => (await turnsOf("wait for an answer that never comes, from the files")).find((item) => item.stuckReason?.includes("ended mid-turn")),
        30_000,
      );
      expect(ended.state).toBe("processing");
      expect(ended.stuckReason).toMatch(new RegExp(`^Claude Code \\(pid ${child.pid}\\) ended mid-turn \\d+(ms|s) ago$`));
      // An agent asking through MCP is told the same.
      const answer = await call(await anAgent(stateDir, { REQWATCH_TELEMETRY_STUCK_AFTER: "3s" }), "source_queue", { source: "otel" });
      const queue = JSON.parse(answer.text) as { messages: { requestId: string; stuckReason: string }[] };
      expect(queue.messages.find((message) => message.requestId === ended.requestId)?.stuckReason).toMatch(
        new RegExp(`^Claude Code \\(pid ${child.pid}\\) ended mid-turn`),
      );
      // And told where it came from: Claude Code's own files, not telemetry.
      const told = await call(await anAgent(stateDir, { REQWATCH_TELEMETRY_STUCK_AFTER: "3s" }), "explain_request", {
        source: "otel",
        requestId: ended.requestId,
      });
      expect(told.text).toMatch(new RegExp(`^${ended.requestId} \\(read from the agent's own files, claude-code, session [^)]+\\) is processing`));
      await closeAgents();
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await api.close();
    }
  }, 120_000);

  it("a subagent: its run an agent of the session with its own call, every call the mock answered counted once", async () => {
    const run = await runClaude("use a subagent, from the files", "subagent", { args: ["--allowedTools", "Agent"] });
    expect(run.code, run.output).toBe(0);
    await turnOf("use a subagent, from the files", "completed");
    const session = path.basename(transcriptOf("use a subagent, from the files"), ".jsonl");
    // Once every call the mock answered is in (the subagent's end comes back as a prompt of its own, after the CLI printed).
    const rows = await eventually(async () => {
      const items = (await get<RequestsView>(`/api/requests?source=otel&session=${session}`)).items;
      const tokens = items.reduce((sum, item) => sum + (item.tokens ?? 0), 0);
      return items.some((item) => item.requestId.startsWith("agent-")) && items.every((item) => item.state === "completed") && tokens === run.calls.length * 150
        ? items
        : undefined;
    }, 30_000);
    const agent = await get<SourceRequestView>(`/api/sources/otel/requests/${rows.find((item) => item.requestId.startsWith("agent-"))!.requestId}`);
    expect(agent.request.prompt).toBe("SUBTASK: say hi");
    expect(rows.map((item) => item.requestId.replace(/\d+$/, ""))).toEqual(expect.arrayContaining(["turn-", "agent-"]));
  }, 120_000);

  it("a resumed session: its two turns, in one session", async () => {
    const first = await runClaude("the first of two, from the files", "text");
    expect(first.code, first.output).toBe(0);
    const session = path.basename(transcriptOf("the first of two, from the files"), ".jsonl");
    const second = await runClaude("the second of two, from the files", "text", { args: ["--resume", session] });
    expect(second.code, second.output).toBe(0);
    await turnOf("the second of two, from the files", "completed");
    const inSession = await get<RequestsView>(`/api/requests?source=otel&session=${session}`);
    const views = await Promise.all(inSession.items.map((item) => get<SourceRequestView>(`/api/sources/otel/requests/${item.requestId}`)));
    expect(views.map((view) => [view.request.prompt, view.request.state])).toEqual([
      ["the second of two, from the files", "completed"],
      ["the first of two, from the files", "completed"],
    ]);
    // The CLI tells the session, and where it came from.
    const shown = runCli(["session", "show", session, "--source", "otel"], { stateDir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^Session ${session} \\(idle, read from Claude Code's own files; started`));
    expect(shown.stdout).toContain("\n2 turns, 2 model calls, 0 tool uses, 240 in / 60 out tokens, $0.0016 estimated\n");
  }, 120_000);

  it("a run that also exports its telemetry is one turn, each call and tool once, whichever told of it first", async () => {
    const receiver = (await dashboard.runtime.telemetry!.ready).url!;
    const telemetry = {
      CLAUDE_CODE_ENABLE_TELEMETRY: "1",
      OTEL_LOGS_EXPORTER: "otlp",
      OTEL_TRACES_EXPORTER: "otlp",
      CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_LOG_USER_PROMPTS: "1",
      OTEL_LOGS_EXPORT_INTERVAL: "500",
      OTEL_BSP_SCHEDULE_DELAY: "500",
    };
    const run = await runClaude("run echo hi, told twice", "tool", { args: ["--allowedTools", "Bash"], env: telemetry });
    expect(run.code, run.output).toBe(0);
    // Its telemetry's own steps (the interaction span ends the turn) and its files' steps have arrived, each in its own time, in the same turn.
    const told = ["prompt", "tool result", "user_prompt", "turn ended"];
    const { view } = await eventually(async () => {
      const found = await turnOf("run echo hi, told twice", "completed");
      return told.every((name) => found.view.steps!.some((step) => step.name === name)) ? found : undefined;
    }, 30_000);
    expect(await turnsOf("run echo hi, told twice")).toHaveLength(1);
    expect(drawn(view, "call")).toHaveLength(2);
    expect(drawn(view, "tool")).toHaveLength(1);
    expect(view.request.tokens).toBe(300);
    expect(view.request.sessionId).toBe(path.basename(transcriptOf("run echo hi, told twice"), ".jsonl"));
  }, 120_000);

  it("a line appended to an open session file reaches an open page's event stream; nothing under Claude Code's folder was written", async () => {
    const before = treeSnapshot(claudeDir);
    const events = await dashboard.stream();
    await events.next("sources");
    // A new session file, written as Claude Code writes one: its prompt line first.
    const file = path.join(claudeDir, "projects", "-live", "7d0f3a52-0000-4000-8000-000000000001.jsonl");
    const prompt = {
      parentUuid: null,
      isSidechain: false,
      promptId: "0b9c5b8e-0000-4000-8000-000000000002",
      type: "user",
      message: { role: "user", content: "appended while watched" },
      uuid: "0b9c5b8e-0000-4000-8000-000000000003",
      timestamp: new Date().toISOString(),
      sessionId: "7d0f3a52-0000-4000-8000-000000000001",
    };
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const written = Date.now();
    fs.appendFileSync(file, `${JSON.stringify(prompt)}\n`);
    await events.next("sources", (event) => event.data.changed.includes("otel"), 30_000);
    const latencyMs = Date.now() - written;
    console.log(`a line appended reached the event stream in ${latencyMs} ms`);
    expect((await turnsOf("appended while watched"))[0]).toMatchObject({ state: "processing" });
    events.close();
    fs.rmSync(path.dirname(file), { recursive: true });
    expect(treeSnapshot(claudeDir).filter((entry) => entry.path !== "projects")).toEqual(before.filter((entry) => entry.path !== "projects"));
  }, 60_000);
});
