import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import { anAnthropicMock } from "../helpers/anthropicMock";
import { CLIENTS, installedClient } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { aGeminiMock, geminiSettings, MOCK_ANSWER as GEMINI_ANSWER, TOOL_FILES, type GeminiScenario } from "../helpers/geminiMock";
import { anOpenAiResponsesMock, MOCK_ANSWER as CODEX_ANSWER, type ResponsesScenario } from "../helpers/openAiResponsesMock";
import { eventually, waitForExit, withOutput } from "../helpers/processes";
import { writeCodexConfig } from "../helpers/codexConfig";
import { everyItem, receivedTurns, type ReceivedRow } from "../helpers/receivedTurns";
import { readRows } from "../helpers/telemetryRows";
import { tempParent } from "../helpers/stateDir";

// Each real CLI (pinned, from the npm registry) run ONCE with its telemetry exported to the
// dashboard's receiver AND its own session files in the folder the same dashboard reads: a session
// seen both ways is one session, each turn, model call and tool once, each figure from the intake
// that has it (docs/AGENT-FILES.md, "One session once").
let stateDir: string;
let codexDir: string;
let geminiHome: string;
let claudeDir: string;
let receiver: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
const { get, turnsOf, turnOf } = receivedTurns(() => dashboard);

beforeAll(async () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-join-"));
  stateDir = path.join(parent, "state");
  codexDir = path.join(parent, "codex");
  geminiHome = path.join(parent, "gemini-home");
  claudeDir = path.join(parent, "claude");
  for (const dir of [codexDir, path.join(geminiHome, ".gemini"), claudeDir]) fs.mkdirSync(dir, { recursive: true });
  dashboard = await aDashboard(
    { stateDir },
    { port: 0, keepMs: 86_400_000, stuckAfterMs: 600_000, claudeDir, codexDir, geminiDir: path.join(geminiHome, ".gemini") },
    "file",
  );
  receiver = (await dashboard.runtime.telemetry!.ready).url!;
}, 600_000);
afterAll(async () => {
  await dashboard.close();
  fs.rmSync(path.dirname(stateDir), { recursive: true, force: true });
});

/** The lifecycles of a session, each with its page's view. */
async function sessionTurns(session: string): Promise<{ row: ReceivedRow; view: SourceRequestView }[]> {
  const rows = (await get<RequestsView>(`/api/requests?source=otel&session=${session}`)).items;
  return Promise.all(rows.map(async (row) => ({ row, view: await get<SourceRequestView>(`/api/sources/otel/requests/${row.requestId}`) })));
}

/** A turn once both intakes told it: its files' step `fromFiles` and its telemetry's `fromTelemetry` are among its steps, and it is in `state`. */
const toldByBoth = (prompt: string, state: string, fromFiles: string, fromTelemetry: string) =>
  eventually(async () => {
    const found = (await turnsOf(prompt)).length === 1 ? await turnOf(prompt, state, 1000).catch(() => undefined) : undefined;
    const names = found?.view.steps!.map((step) => step.name) ?? [];
    return found && names.includes(fromFiles) && names.includes(fromTelemetry) ? found : undefined;
  }, 60_000);

const drawn = (view: SourceRequestView, kind: "call" | "tool") => everyItem(view.timeline!.items).filter((item) => item.kind === kind);

/** Each model call's tokens (in, cached and out) as its page's timeline draws it: `100 in / 30 out tokens, cache read 20`. */
const callTokens = (view: SourceRequestView, role: string | null = null) =>
  drawn(view, "call")
    .filter((item) => item.role === role)
    .sort((a, b) => a.startAt - b.startAt)
    .map((item) => {
      const [, input, output] = /(\d+) in \/ (\d+) out tokens/.exec(item.summary) ?? [];
      return Number(input ?? 0) + Number(output ?? 0) + Number(/cache read (\d+)/.exec(item.summary)?.[1] ?? 0);
    });

// ---- Codex CLI: CODEX_HOME the folder the dashboard reads, its [otel] section at the receiver.

function startCodex(apiUrl: string, prompt: string, maxRetries = 4): ChildProcess & { output: () => string } {
  writeCodexConfig(codexDir, apiUrl, { receiver, maxRetries });
  const home = tempParent();
  const child = spawn(path.join(installedClient(CLIENTS.codexCli), "node_modules/.bin/codex"), ["exec", "--skip-git-repo-check", prompt], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      CODEX_HOME: codexDir,
      MOCK_OPENAI_KEY: "test-key-for-the-mock",
      OTEL_BLRP_SCHEDULE_DELAY: "200",
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    } as Record<string, string | undefined> as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return withOutput(child);
}

async function runCodex(prompt: string, scenario: ResponsesScenario, maxRetries?: number) {
  const api = await anOpenAiResponsesMock(scenario);
  try {
    const child = startCodex(api.url, prompt, maxRetries);
    const code = await waitForExit(child);
    const output = child.output();
    return { code, output, calls: api.calls, session: /session id: ([0-9a-f-]{36})/.exec(output)![1]! };
  } finally {
    await api.close();
  }
}

/** What a Codex thread's rollout file says its calls used, each (`token_usage_record`: input with the cached, and output). */
function codexFileTokens(thread: string): number[] {
  const file = (fs.readdirSync(path.join(codexDir, "sessions"), { recursive: true, encoding: "utf8" }) as string[]).find((name) =>
    name.endsWith(`-${thread}.jsonl`),
  )!;
  return fs
    .readFileSync(path.join(codexDir, "sessions", file), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string; payload: { usage?: { input_tokens: number; output_tokens: number } } })
    .filter((line) => line.type === "token_usage_record")
    .map((line) => line.payload.usage!.input_tokens + line.payload.usage!.output_tokens);
}

// ---- Gemini CLI: GEMINI_CLI_HOME the folder the dashboard reads, its settings' telemetry at the receiver.

async function runGemini(scenario: GeminiScenario, prompt: string) {
  const api = await aGeminiMock(scenario);
  const project = tempParent();
  fs.writeFileSync(path.join(project, TOOL_FILES.present), "a note\n");
  fs.mkdirSync(path.join(project, ".gemini"));
  const settings = geminiSettings(receiver);
  fs.writeFileSync(path.join(project, ".gemini", "settings.json"), JSON.stringify(settings));
  fs.writeFileSync(path.join(geminiHome, ".gemini", "settings.json"), JSON.stringify(settings));
  try {
    const child = withOutput(
      spawn(path.join(installedClient(CLIENTS.geminiCli), "node_modules/.bin/gemini"), ["-p", prompt], {
        cwd: project,
        env: {
          PATH: process.env.PATH,
          HOME: project,
          GEMINI_CLI_HOME: geminiHome,
          GEMINI_API_KEY: "test-key-for-the-mock",
          GOOGLE_GEMINI_BASE_URL: api.url,
          GEMINI_CLI_TRUST_WORKSPACE: "true",
          OTEL_BSP_SCHEDULE_DELAY: "500",
          OTEL_BLRP_SCHEDULE_DELAY: "500",
        } as Record<string, string | undefined> as NodeJS.ProcessEnv,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      }),
    );
    const code = await waitForExit(child);
    return { code, output: child.output(), calls: api.calls };
  } finally {
    await api.close();
  }
}

/** The Gemini session file holding a prompt: its session, and each model message's tokens (input with the cached, and output) once. */
function geminiFile(prompt: string): { session: string; tokens: number[] } {
  const tmp = path.join(geminiHome, ".gemini", "tmp");
  for (const project of fs.readdirSync(tmp)) {
    const chats = path.join(tmp, project, "chats");
    for (const name of fs.existsSync(chats) ? fs.readdirSync(chats) : []) {
      const lines = fs
        .readFileSync(path.join(chats, name), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      if (!lines.some((line) => JSON.stringify(line.content ?? "").includes(JSON.stringify(prompt).slice(1, -1)))) continue;
      const calls = new Map<string, number>();
      for (const line of lines) {
        const tokens = line.tokens as { input: number; output: number } | undefined;
        if (line.type === "gemini" && tokens) calls.set(String(line.id), tokens.input + tokens.output);
      }
      return { session: String(lines[0]!.sessionId), tokens: [...calls.values()] };
    }
  }
  throw new Error(`no session file holds ${prompt}`);
}

const OVERLOADED = "503 UNAVAILABLE: The model is overloaded. Please try again later.";

describe("one session once: each CLI run once with its telemetry on and its files read by the same dashboard", () => {
  it("Codex CLI, a prompt that runs its shell tool: one turn in its thread, completed, both calls and the tool once, its tokens the file's", async () => {
    const run = await runCodex("run echo hi, told by both", "tool");
    expect(run.code, run.output).toBe(0);
    expect(run.calls).toHaveLength(2);
    // Both tellings have arrived: the file's end (task complete) and the telemetry's (its turn's span).
    const { row, view } = await toldByBoth("run echo hi, told by both", "completed", "task complete", "turn ended");
    const turns = await sessionTurns(run.session);
    expect(turns.map(({ row: turn }) => turn.requestId)).toEqual([row.requestId]);
    expect(view.request).toMatchObject({ state: "completed", output: CODEX_ANSWER, sessionId: run.session });
    expect(row.note).toMatch(/^2 model calls, 1 tool use, 200 in \/ 60 out tokens, \$0\.\d+ estimated$/);
    expect(callTokens(view)).toEqual(codexFileTokens(run.session));
    expect(drawn(view, "call")).toHaveLength(2);
    expect(drawn(view, "tool")).toHaveLength(1);
  }, 180_000);

  it("Codex CLI, 500 until it gives up (its turn's span never sent): one turn, failed with the error it printed, no tokens", async () => {
    const run = await runCodex("fail until it gives up, told by both", "error", 1);
    expect(run.code, run.output).toBe(1);
    expect(run.calls.map((call) => call.status)).toEqual([500, 500]);
    const printed = /ERROR: (.+)/.exec(run.output)![1]!.trim();
    const { row, view } = await toldByBoth("fail until it gives up, told by both", "failed", "task complete", "api_request");
    expect((await sessionTurns(run.session)).map(({ row: turn }) => turn.requestId)).toEqual([row.requestId]);
    expect(view.request.error).toBe(`${printed} (internal_server_error)`);
    expect(row.tokens ?? 0).toBe(0);
  }, 180_000);

  it("Codex CLI, killed while the API never answers (no span of its turn ever sent): one turn, stuck saying its process ended mid-turn", async () => {
    const api = await anOpenAiResponsesMock("hang");
    const child = startCodex(api.url, "wait for an answer, told by both");
    try {
      // Both have told of it (its file's prompt, its telemetry's): then it is killed.
      await eventually(async () => {
        const found = await turnsOf("wait for an answer, told by both");
        if (found.length !== 1) return undefined;
        // Not found: the two intakes' turns were joined between the list and the page; asked again.
        const response = await dashboard.ask(`/api/sources/otel/requests/${found[0]!.requestId}`);
        if (response.status !== 200) return undefined;
        const names = (await response.json<SourceRequestView>()).steps!.map((step) => step.name);
        return names.includes("prompt") && names.includes("user_prompt") ? true : undefined;
      }, 60_000);
      const exited = waitForExit(child);
      child.kill("SIGKILL");
      await exited;
      const ended = await eventually(
        async () => (await turnsOf("wait for an answer, told by both")).find((row) => row.stuckReason?.includes("ended mid-turn")),
        30_000,
      );
      expect(ended.stuckReason).toMatch(new RegExp(`^Codex CLI \\(pid ${child.pid}\\) ended mid-turn`));
      expect(await turnsOf("wait for an answer, told by both")).toHaveLength(1);
      expect((await sessionTurns(ended.sessionId!)).map(({ row }) => row.requestId)).toEqual([ended.requestId]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await api.close();
    }
  }, 180_000);

  it("Gemini CLI, a prompt that runs tools: one turn in its session, completed, each main call once with the file's tokens, the router's from its telemetry", async () => {
    const run = await runGemini("tool", "read the two files, told by both");
    expect(run.code, run.output).toBe(0);
    const file = geminiFile("read the two files, told by both");
    const { row, view } = await toldByBoth("read the two files, told by both", "completed", "prompt", "user_prompt");
    const turns = await sessionTurns(file.session);
    expect(turns.map(({ row: turn }) => turn.requestId)).toEqual([row.requestId]);
    expect(view.request).toMatchObject({ output: GEMINI_ANSWER, sessionId: file.session });
    const mainCalls = run.calls.filter((call) => !call.router && call.method !== "countTokens");
    const routerCalls = run.calls.filter((call) => call.router);
    // Its calls: the main model's, each told by both and drawn once, with the file's tokens; the router's, which only its telemetry tells.
    expect(callTokens(view)).toEqual(file.tokens);
    expect(callTokens(view, "router")).toHaveLength(routerCalls.length);
    expect(drawn(view, "call")).toHaveLength(mainCalls.length + routerCalls.length);
    expect(row.note).toMatch(new RegExp(`^${mainCalls.length + routerCalls.length} model calls, 2 tool uses, `));
    expect(drawn(view, "tool")).toHaveLength(2);
  }, 180_000);

  it("Gemini CLI, 503 until it gives up: one turn, failed with the error the API gave (its files keep none), the attempts its telemetry told", async () => {
    const run = await runGemini("unavailable", "unavailable until it gives up, told by both");
    expect(run.code).not.toBe(0);
    const file = geminiFile("unavailable until it gives up, told by both");
    const { row, view } = await toldByBoth("unavailable until it gives up, told by both", "failed", "gave up", "api_error");
    expect((await sessionTurns(file.session)).map(({ row: turn }) => turn.requestId)).toEqual([row.requestId]);
    expect(view.request.error).toBe(OVERLOADED);
    expect(row.attempt).toBe(run.calls.filter((call) => !call.router && call.status === 503).length);
  }, 180_000);

  it("Claude Code, a subagent: every call the mock answered counted once in its session, its telemetry and its files both read", async () => {
    const api = await anAnthropicMock("subagent");
    const home = tempParent();
    try {
      const child = withOutput(
        spawn(
          path.join(installedClient(CLIENTS.claudeCode), "node_modules/.bin/claude"),
          ["-p", "use a subagent, told by both", "--model", "claude-sonnet-4-5", "--allowedTools", "Agent"],
          {
            cwd: home,
            env: {
              PATH: process.env.PATH,
              HOME: home,
              CLAUDE_CONFIG_DIR: claudeDir,
              ANTHROPIC_BASE_URL: api.url,
              ANTHROPIC_API_KEY: "test-key-for-the-mock",
              CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
              DISABLE_AUTOUPDATER: "1",
              CLAUDE_CODE_ENABLE_TELEMETRY: "1",
              OTEL_LOGS_EXPORTER: "otlp",
              OTEL_TRACES_EXPORTER: "otlp",
              CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1",
              OTEL_EXPORTER_OTLP_ENDPOINT: receiver,
              OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
              OTEL_LOG_USER_PROMPTS: "1",
              OTEL_LOGS_EXPORT_INTERVAL: "500",
              OTEL_BSP_SCHEDULE_DELAY: "500",
            } as Record<string, string | undefined> as NodeJS.ProcessEnv,
            stdio: ["ignore", "pipe", "pipe"],
          },
        ),
      );
      expect(await waitForExit(child), child.output()).toBe(0);
      const { view } = await toldByBoth("use a subagent, told by both", "completed", "prompt", "turn ended");
      const session = view.request.sessionId!;
      const answered = api.calls.length;
      // Once everything both told is in: the session's tokens are each call's once (150 a call), never more.
      const turns = await eventually(async () => {
        const found = await sessionTurns(session);
        const tokens = found.reduce((sum, { row }) => sum + (row.tokens ?? 0), 0);
        return found.every(({ row }) => row.state === "completed") && tokens >= answered * 150 ? found : undefined;
      }, 60_000);
      expect(turns.reduce((sum, { row }) => sum + (row.tokens ?? 0), 0)).toBe(answered * 150);
      // Its prompt's turn, the subagent's run, and the turn its end came back as (a `<task-notification>` prompt): each once.
      expect(turns.map(({ row }) => row.requestId.replace(/\d+$/, "")).sort()).toEqual(["agent-", "turn-", "turn-"]);
      expect(turns.find(({ row }) => row.requestId.startsWith("agent-"))!.view.request.prompt).toBe("SUBTASK: say hi");
      expect(turns.flatMap(({ view: turn }) => drawn(turn, "call"))).toHaveLength(answered);
    } finally {
      await api.close();
    }
  }, 180_000);

  it("telemetry.db deleted while the dashboard runs: the agents' files are read again into the new store, each of their turns once, as many as before", async () => {
    const file = path.join(stateDir, "telemetry.db");
    // What the files told (the lifecycles with a step read from them), as a new process reads the store on disk.
    const told = (where: string) =>
      readRows<{ kind: string; session: string; state: string; prompt: string | null }>(
        file,
        `SELECT kind, session, state, prompt FROM lifecycles ${where} ORDER BY session, prompt`,
      );
    const before = told("WHERE seq IN (SELECT seq FROM steps WHERE step_key LIKE 'line:%')");
    expect(before.length).toBeGreaterThanOrEqual(7);
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
    // Once read again (the follower looks every 5 s), the same lifecycles; should they never be, the difference is shown.
    const same = (rows: typeof before) => JSON.stringify(rows) === JSON.stringify(before);
    const after = await eventually(() => (fs.existsSync(file) && same(told("")) ? told("") : undefined), 60_000).catch(() => told(""));
    expect(after).toEqual(before);
  }, 120_000);
});
