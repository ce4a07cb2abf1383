import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import { CLIENTS, installedClient } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { anAgent, call, closeAgents, receivedOverMcp } from "../helpers/mcpAgent";
import { anOpenAiResponsesMock, MOCK_ANSWER, type ResponsesScenario } from "../helpers/openAiResponsesMock";
import { eventually, waitForExit, withOutput } from "../helpers/processes";
import { writeCodexConfig } from "../helpers/codexConfig";
import { tempParent } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";
import { receivedTurns } from "../helpers/receivedTurns";

// The real Codex CLI (pinned, from the npm registry), run headless as `codex exec`, with its
// telemetry OFF (no [otel] section), against a local stand-in for the Responses API: the dashboard
// reads the rollout files it writes into its folder (CODEX_HOME, a temp folder here) and shows each
// run as the CLI did it (its output, the mock's log), through its API.
let codex: string;
let codexDir: string;
let stateDir: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
const { get, turnOf } = receivedTurns(() => dashboard);
/** A turn with nothing written for 3 s is stuck here (10 minutes by default). */
const STUCK_AFTER_MS = 3000;

beforeAll(async () => {
  codex = path.join(installedClient(CLIENTS.codexCli), "node_modules/.bin/codex");
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-codex-files-"));
  codexDir = path.join(parent, "codex");
  fs.mkdirSync(codexDir);
  stateDir = path.join(parent, "state");
  dashboard = await aDashboard({ stateDir }, { port: null, keepMs: 86_400_000, stuckAfterMs: STUCK_AFTER_MS, claudeDir: null, codexDir }, "file");
}, 600_000);
afterAll(async () => {
  await closeAgents();
  await dashboard.close();
  fs.rmSync(path.dirname(codexDir), { recursive: true, force: true });
});

/** Every run's files in the one CODEX_HOME the dashboard reads: its config names a provider at this run's mock, and no [otel]. */
function startCodex(apiUrl: string, args: string[], maxRetries = 4, home = tempParent()): ChildProcess & { output: () => string } {
  writeCodexConfig(codexDir, apiUrl, { maxRetries });
  const child = spawn(codex, ["exec", "--skip-git-repo-check", ...args], {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexDir, MOCK_OPENAI_KEY: "test-key-for-the-mock" } as Record<
      string,
      string | undefined
    > as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return withOutput(child);
}

async function runCodex(prompt: string, scenario: ResponsesScenario, maxRetries?: number) {
  const api = await anOpenAiResponsesMock(scenario);
  try {
    const child = startCodex(api.url, [prompt], maxRetries);
    const code = await waitForExit(child);
    return { code, output: child.output(), calls: api.calls };
  } finally {
    await api.close();
  }
}

/** The session id `codex exec` prints in its header. */
const sessionIdOf = (output: string) => /session id: ([0-9a-f-]{36})/.exec(output)?.[1];

const inState = (state: string) => (row: { state: string }) => row.state === state;
const stepsOf = (view: SourceRequestView) => view.steps!.map((step) => `${step.name}: ${step.summary}`);

/** The pids holding a file open (a running Codex holds its rollout file). */
function holdersOf(file: string): number[] {
  return fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return fs.readdirSync(`/proc/${pid}/fd`).some((fd) => fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === file);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The rollout file Codex wrote for a thread. */
function rolloutOf(thread: string): string {
  const found = (fs.readdirSync(path.join(codexDir, "sessions"), { recursive: true, encoding: "utf8" }) as string[]).find((file) =>
    file.endsWith(`-${thread}.jsonl`),
  );
  if (!found) throw new Error(`no rollout file for ${thread}`);
  return path.join(codexDir, "sessions", found);
}

describe("Codex CLI, run for real with its telemetry off, seen through its own rollout files", () => {
  it("a plain prompt: one turn of its thread, completed with the answer the CLI printed, its model, tokens (cached apart) and estimated cost", async () => {
    const run = await runCodex("say hello, from the files", "text");
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/tokens used\s+130/);
    const { row, view } = await turnOf("say hello, from the files", inState("completed"));
    expect(row).toMatchObject({ workspace: "codex_exec", model: "gpt-5-codex", tokens: 130, stuckReason: null, sessionId: sessionIdOf(run.output) });
    expect(row.note).toMatch(/^1 model call, 100 in \/ 30 out tokens, \$0\.\d+ estimated$/);
    expect(view.request).toMatchObject({ prompt: "say hello, from the files", output: MOCK_ANSWER, state: "completed" });
    expect(stepsOf(view)).toContainEqual(expect.stringMatching(/^model call: gpt-5-codex, 100 in \/ 30 out, 20 cached, 5 reasoning, \d+(\.\d+)? m?s$/));
    expect(run.calls).toHaveLength(1);
  }, 120_000);

  it("a prompt that runs its shell tool: both model calls the mock answered, the command with its output and duration", async () => {
    const run = await runCodex("run echo hi, from the files", "tool");
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/echo hi[\s\S]*succeeded[\s\S]*\nhi\n/);
    expect(run.calls.map((call) => call.toolOutput)).toEqual([false, true]);
    const { row, view } = await turnOf("run echo hi, from the files", inState("completed"));
    expect(row.note).toMatch(/^2 model calls, 1 tool use, 200 in \/ 60 out tokens, \$0\.\d+ estimated$/);
    expect(stepsOf(view)).toContainEqual("tool exec_command: asked for, $ echo hi");
    expect(stepsOf(view)).toContainEqual(expect.stringMatching(/^tool result: exec_command, \$ echo hi, ok, \d+(\.\d+)? m?s, output hi$/));
  }, 120_000);

  it("500 twice, then an answer: completed with its one call (the failed attempts are in the mock's log, not in Codex's file)", async () => {
    const run = await runCodex("answer after two errors, from the files", "error-twice");
    expect(run.code, run.output).toBe(0);
    expect(run.calls.map((call) => call.status)).toEqual([500, 500, 200]);
    const { row, view } = await turnOf("answer after two errors, from the files", inState("completed"));
    expect(row.note).toMatch(/^1 model call, 100 in \/ 30 out tokens, \$0\.\d+ estimated$/);
    expect(view.request.error).toBeUndefined();
  }, 120_000);

  it("500 until Codex gives up: the turn failed with the error the CLI printed", async () => {
    const run = await runCodex("fail until it gives up, from the files", "error", 1);
    expect(run.code, run.output).toBe(1);
    expect(run.calls.map((call) => call.status)).toEqual([500, 500]);
    const printed = /ERROR: (.+)/.exec(run.output)![1]!.trim();
    const { view } = await turnOf("fail until it gives up, from the files", inState("failed"));
    expect(view.request.error).toBe(`${printed} (internal_server_error)`);
  }, 120_000);

  it("a run waiting on a hung API is stuck waiting on the model; killed mid-call, it is stuck saying its process ended mid-turn", async () => {
    const api = await anOpenAiResponsesMock("hang");
    const child = startCodex(api.url, ["wait for an answer that never comes, from the files"]);
    try {
      const { row: waiting } = await turnOf("wait for an answer that never comes, from the files", (row) => row.stuckReason !== null);
      expect(waiting.state).toBe("processing");
      expect(waiting.stuckReason).toMatch(/^waiting on the model for \d+s$/);
      expect(api.calls).toHaveLength(1);
      // The process holding its rollout file is the one `codex` became (its launcher execs the binary).
      expect(holdersOf(rolloutOf(waiting.sessionId!))).toEqual([child.pid]);
      const exited = waitForExit(child);
      child.kill("SIGKILL");
      await exited;
      // What it left: a task_started and no task_complete.
      const types = fs
        .readFileSync(rolloutOf(waiting.sessionId!), "utf8")
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { payload: { type?: string } }).payload.type);
      expect(types).toContain("task_started");
      expect(types).not.toContain("task_complete");
      const { row: ended } = await turnOf("wait for an answer that never comes, from the files", (row) => row.stuckReason?.includes("ended mid-turn") ?? false);
      expect(ended.state).toBe("processing");
      expect(ended.stuckReason).toMatch(new RegExp(`^Codex CLI \\(pid ${child.pid}\\) ended mid-turn \\d+(ms|s) ago$`));
      // An agent asking through MCP is told the same, and where it came from.
      const agent = await anAgent(stateDir, { REQWATCH_TELEMETRY_STUCK_AFTER: "3s" });
      const queue = JSON.parse((await call(agent, "source_queue", { source: "otel" })).text) as { messages: { requestId: string; stuckReason: string }[] };
      expect(queue.messages.find((message) => message.requestId === ended.requestId)?.stuckReason).toMatch(
        new RegExp(`^Codex CLI \\(pid ${child.pid}\\) ended mid-turn`),
      );
      const told = await call(agent, "explain_request", { source: "otel", requestId: ended.requestId });
      expect(told.text).toMatch(new RegExp(`^${ended.requestId} \\(read from the agent's own files, [^)]+\\) is processing`));
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await api.close();
    }
  }, 120_000);

  it("a resumed session (`codex exec resume --last`): its two turns, in one session", async () => {
    const api = await anOpenAiResponsesMock("text");
    try {
      // `--last` is the latest session of the folder it runs in: both run in one.
      const home = tempParent();
      const first = startCodex(api.url, ["first prompt, from the files"], 4, home);
      expect(await waitForExit(first), first.output()).toBe(0);
      const second = startCodex(api.url, ["resume", "--last", "second prompt, resumed, from the files"], 4, home);
      expect(await waitForExit(second), second.output()).toBe(0);
      const session = sessionIdOf(first.output())!;
      expect(sessionIdOf(second.output())).toBe(session);
      await turnOf("second prompt, resumed, from the files", inState("completed"));
      const turns = await get<RequestsView>(`/api/requests?source=otel&session=${session}`);
      expect(turns.items.map((item) => [item.state, item.note])).toEqual([
        ["completed", expect.stringMatching(/^1 model call, 100 in \/ 30 out tokens, \$0\.\d+ estimated$/)],
        ["completed", expect.stringMatching(/^1 model call, 100 in \/ 30 out tokens, \$0\.\d+ estimated$/)],
      ]);
      expect(api.calls).toHaveLength(2);
      // An agent resuming it: one Codex CLI session of both turns, read from its files.
      const context = await receivedOverMcp.session(await anAgent(stateDir), session);
      expect(context).toContain("read from Codex CLI's own files");
      expect(context).toContain("2 turns");
      // Codex appends the resumed turn to the thread's one file.
      expect(
        (fs.readdirSync(path.join(codexDir, "sessions"), { recursive: true, encoding: "utf8" }) as string[]).filter((file) =>
          file.endsWith(`-${session}.jsonl`),
        ),
      ).toHaveLength(1);
    } finally {
      await api.close();
    }
  }, 120_000);

  it("nothing under CODEX_HOME changes (bytes and modification times) while the dashboard reads it", async () => {
    const before = treeSnapshot(codexDir);
    // A few looks of the follower (every 2 s at its runs, every 5 s at every file) pass over it.
    const looked = Date.now();
    await eventually(() => (Date.now() - looked > 11_000 ? true : undefined), 20_000);
    expect(treeSnapshot(codexDir)).toEqual(before);
  }, 60_000);
});
