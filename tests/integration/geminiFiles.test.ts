import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import type { TimelineItem } from "../../lib/views/timelineView";
import { CLIENTS, installedClient } from "../helpers/clients";
import { runCli } from "../helpers/cli";
import { aDashboard } from "../helpers/dashboard";
import { aGeminiFolder } from "../helpers/geminiFolder";
import { aGeminiMock, geminiSettings, MOCK_ANSWER, TOOL_FILES, type GeminiScenario } from "../helpers/geminiMock";
import { eventually, waitForExit } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";
import { receivedTurns } from "../helpers/receivedTurns";

// The real Gemini CLI (pinned, from the npm registry), run headless as a user runs it (`gemini -p`),
// with its telemetry OFF, against a local stand-in for the Gemini API: the dashboard reads the
// session files it writes into its folder (GEMINI_CLI_HOME/.gemini, a temp folder here) and shows
// each run as the CLI did it, through its API. One run also exports its telemetry, to the dashboard's receiver.
let gemini: string;
let geminiHome: string;
let geminiDir: string;
let stateDir: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
const { get, turnsOf, turnOf } = receivedTurns(() => dashboard);
/** A turn with nothing written for 3 s is stuck here (10 minutes by default). */
const STUCK_AFTER_MS = 3000;

beforeAll(async () => {
  gemini = path.join(installedClient(CLIENTS.geminiCli), "node_modules/.bin/gemini");
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-gemini-files-"));
  stateDir = path.join(parent, "state");
  geminiHome = path.join(parent, "gemini-home");
  geminiDir = path.join(geminiHome, ".gemini");
  fs.mkdirSync(geminiDir, { recursive: true });
  fs.writeFileSync(path.join(geminiDir, "settings.json"), JSON.stringify(geminiSettings()));
  dashboard = await aDashboard({ stateDir }, { port: 0, keepMs: 86_400_000, stuckAfterMs: STUCK_AFTER_MS, geminiDir }, "file");
}, 600_000);
afterAll(async () => {
  await dashboard.close();
  fs.rmSync(path.dirname(stateDir), { recursive: true, force: true });
});

/** A project for a run: a folder of its own (its files under tmp/<project>/chats), with the tool scenario's file; its own settings when given (the project's `.gemini/settings.json`). */
function aProject(settings?: object): string {
  const project = tempParent();
  fs.writeFileSync(path.join(project, TOOL_FILES.present), "a note\n");
  if (settings) {
    fs.mkdirSync(path.join(project, ".gemini"));
    fs.writeFileSync(path.join(project, ".gemini", "settings.json"), JSON.stringify(settings));
  }
  return project;
}

function startGemini(project: string, apiUrl: string, args: string[]): ChildProcess {
  return spawn(gemini, args, {
    cwd: project,
    env: {
      PATH: process.env.PATH,
      HOME: project,
      // Every run's files in the one folder the dashboard reads; no telemetry.
      GEMINI_CLI_HOME: geminiHome,
      GEMINI_API_KEY: "test-key-for-the-mock",
      GOOGLE_GEMINI_BASE_URL: apiUrl,
      // A headless run refuses a folder the user has not trusted: its docs' way for automation.
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    } as Record<string, string | undefined> as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: the CLI starts itself again as a child, and a kill reaches both.
    detached: true,
  });
}

async function runGemini(scenario: GeminiScenario, prompts: string[], settings?: object) {
  const api = await aGeminiMock(scenario);
  const project = aProject(settings);
  const runs: { code: number | null; stdout: string; output: string }[] = [];
  try {
    for (const [i, prompt] of prompts.entries()) {
      const child = startGemini(project, api.url, ["-p", prompt, ...(i > 0 ? ["--resume", "latest"] : [])]);
      let stdout = "";
      let output = "";
      child.stdout!.on("data", (chunk) => ((stdout += chunk), (output += chunk)));
      child.stderr!.on("data", (chunk) => (output += chunk));
      runs.push({ code: await waitForExit(child), stdout, output });
    }
    return { runs, calls: api.calls, project };
  } finally {
    await api.close();
  }
}

function drawn(view: SourceRequestView, kind: "call" | "tool"): TimelineItem[] {
  const all = (items: TimelineItem[]): TimelineItem[] => items.flatMap((item) => [item, ...all(item.children)]);
  return all(view.timeline!.items).filter((item) => item.kind === kind);
}

/** The session the CLI wrote a prompt in: its file's header's `sessionId`. */
function sessionOf(prompt: string): string {
  const tmp = path.join(geminiDir, "tmp");
  for (const project of fs.readdirSync(tmp)) {
    const chats = path.join(tmp, project, "chats");
    if (!fs.existsSync(chats)) continue;
    for (const name of fs.readdirSync(chats)) {
      const text = fs.readFileSync(path.join(chats, name), "utf8");
      if (text.includes(JSON.stringify(prompt))) return (JSON.parse(text.split("\n")[0]!) as { sessionId: string }).sessionId;
    }
  }
  throw new Error(`no session file holds ${prompt}`);
}

const summaries = (view: SourceRequestView) => view.steps!.map((step) => `${step.name}: ${step.summary}`);

describe("Gemini CLI, run for real with its telemetry off, seen through its own session files", () => {
  it("a plain prompt: one turn, completed with the answer the CLI printed, its model, tokens (cached too) and estimated cost, in its session", async () => {
    const { runs, calls } = await runGemini("text", ["say hello, from the gemini files"]);
    expect(runs[0]!.code, runs[0]!.output).toBe(0);
    expect(calls.map((call) => (call.router ? "router" : "main"))).toEqual(["router", "main"]);
    const { row, view } = await turnOf("say hello, from the gemini files", "completed");
    const session = sessionOf("say hello, from the gemini files");
    // The main model's call only: the router's is not in the CLI's files.
    expect(row).toMatchObject({ workspace: "gemini-cli", model: calls[1]!.model, tokens: 130, stuckReason: null, sessionId: session });
    expect(row.note).toMatch(/^1 model call, 100 in \/ 30 out tokens, \$0\.\d+ estimated/);
    expect(view.request).toMatchObject({ prompt: "say hello, from the gemini files", output: runs[0]!.stdout.trim(), state: "completed" });
    expect(view.request.output).toBe(MOCK_ANSWER);
    expect(summaries(view)).toEqual([
      "prompt: a prompt of 32 characters",
      expect.stringMatching(new RegExp(`^model call: ${calls[1]!.model.replace(/\./g, "\\.")}, 100 in / 30 out \\(20 cached\\), \\d+(\\.\\d+)? m?s$`)),
    ]);
    const inSession = await get<RequestsView>(`/api/requests?source=otel&session=${session}`);
    expect(inSession.items.map((item) => item.requestId)).toEqual([row.requestId]);
  }, 120_000);

  it("a prompt that runs tools: both model calls the mock answered, each tool with its status, the missing file's with its error", async () => {
    const { runs, calls } = await runGemini("tool", ["read the two files, from the gemini files"]);
    expect(runs[0]!.code, runs[0]!.output).toBe(0);
    expect(calls.filter((call) => !call.router)).toHaveLength(2);
    const { row, view } = await turnOf("read the two files, from the gemini files", "completed");
    expect(row.note).toMatch(/^2 model calls, 2 tool uses, 200 in \/ 60 out tokens/);
    const steps = summaries(view);
    expect(steps).toContainEqual(expect.stringMatching(/^tool read_file: ok, note\.txt, \d+(\.\d+)? m?s$/));
    expect(steps).toContainEqual(
      expect.stringMatching(new RegExp(`^tool read_file: error: File not found: .*${TOOL_FILES.missing}, ${TOOL_FILES.missing}, \\d+(\\.\\d+)? m?s$`)),
    );
    expect(drawn(view, "tool").map((tool) => [tool.name, tool.error])).toEqual(
      expect.arrayContaining([
        ["read_file", null],
        ["read_file", expect.stringMatching(/^File not found: /)],
      ]),
    );
    expect(drawn(view, "call")).toHaveLength(2);
  }, 120_000);

  it("503 twice, then an answer: completed with the one call that answered (the CLI's files keep no failed attempt)", async () => {
    const { runs, calls } = await runGemini("unavailable-twice", ["answer after two 503s, from the gemini files"]);
    expect(runs[0]!.code, runs[0]!.output).toBe(0);
    expect(calls.filter((call) => !call.router).map((call) => call.status)).toEqual([503, 503, 200]);
    const { row, view } = await turnOf("answer after two 503s, from the gemini files", "completed");
    expect(row.note).toMatch(/^1 model call, /);
    expect(view.request).toMatchObject({ output: MOCK_ANSWER, state: "completed" });
    expect(view.request.error ?? null).toBeNull();
  }, 120_000);

  it("a run waiting on a hung API is stuck waiting on the model; killed, it is stuck saying its process ended mid-turn", async () => {
    const api = await aGeminiMock("hang");
    const child = startGemini(aProject(), api.url, ["-p", "wait for an answer that never comes, from the gemini files"]);
    try {
      const waiting = await eventually(
        async () => (await turnsOf("wait for an answer that never comes, from the gemini files")).find((item) => item.stuckReason !== null),
        60_000,
      );
      expect(waiting.state).toBe("processing");
      expect(waiting.stuckReason).toMatch(/^waiting on the model for \d+s$/);
      expect(api.calls.filter((call) => !call.router)).toHaveLength(1);
      const exited = waitForExit(child);
      process.kill(-child.pid!, "SIGKILL");
      await exited;
      const ended = await eventually(
        async () => (await turnsOf("wait for an answer that never comes, from the gemini files")).find((item) => item.stuckReason?.includes("ended mid-turn")),
        30_000,
      );
      expect(ended.state).toBe("processing");
      expect(ended.stuckReason).toMatch(new RegExp(`^Gemini CLI \\(pid ${child.pid}\\) ended mid-turn \\d+(ms|s) ago$`));
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
      await api.close();
    }
  }, 120_000);

  it("a resumed session: its two turns, in one session", async () => {
    const { runs } = await runGemini("text", ["the first of two, from the gemini files", "the second of two, from the gemini files"]);
    for (const run of runs) expect(run.code, run.output).toBe(0);
    await turnOf("the second of two, from the gemini files", "completed");
    const session = sessionOf("the first of two, from the gemini files");
    const inSession = await get<RequestsView>(`/api/requests?source=otel&session=${session}`);
    const views = await Promise.all(inSession.items.map((item) => get<SourceRequestView>(`/api/sources/otel/requests/${item.requestId}`)));
    expect(views.map((view) => [view.request.prompt, view.request.state])).toEqual([
      ["the second of two, from the gemini files", "completed"],
      ["the first of two, from the gemini files", "completed"],
    ]);
    // The CLI tells the session, and where it came from.
    const shown = runCli(["session", "show", session, "--source", "otel"], { stateDir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^Session ${session} \\(idle, read from Gemini CLI's own files; started`));
    expect(shown.stdout).toMatch(/\n2 turns, 2 model calls, 0 tool uses, 200 in \/ 60 out tokens, \$0\.\d+ estimated\n/);
  }, 120_000);

  it("a run that also exports its telemetry is one turn of the CLI's own session: its prompt, its main call drawn once, the router's from its telemetry", async () => {
    const receiver = (await dashboard.runtime.telemetry!.ready).url!;
    const { runs, calls } = await runGemini("text", ["say hello, told twice by gemini"], geminiSettings(receiver));
    expect(runs[0]!.code, runs[0]!.output).toBe(0);
    const session = sessionOf("say hello, told twice by gemini");
    // Both tellings arrived, each in its own time: its file's prompt line and its telemetry's event.
    const view = await eventually(async () => {
      const items = (await get<RequestsView>(`/api/requests?source=otel&session=${session}`)).items;
      if (items.length !== 1 || items[0]!.state !== "completed") return undefined;
      const found = await get<SourceRequestView>(`/api/sources/otel/requests/${items[0]!.requestId}`);
      const names = found.steps!.map((step) => step.name);
      return names.includes("prompt") && names.includes("user_prompt") ? found : undefined;
    }, 30_000);
    expect(view.request).toMatchObject({ prompt: "say hello, told twice by gemini", sessionId: session, output: MOCK_ANSWER });
    // The main model's call drawn once (told by both), the router's beside it (its telemetry's alone).
    expect(
      drawn(view, "call")
        .map((item) => item.role)
        .sort(),
    ).toEqual([null, "router"]);
    expect(calls.filter((call) => call.method !== "countTokens")).toHaveLength(2);
  }, 120_000);

  it("a session file that appears is read, and its run with no process left is stuck; nothing under Gemini CLI's folder was written", async () => {
    const before = treeSnapshot(geminiDir);
    // A killed run's files (tests/fixtures/gemini-sessions/killed), written into the folder as the CLI writes them.
    const { sessions } = aGeminiFolder(geminiDir, ["killed"]);
    const ended = await eventually(async () => (await turnsOf("wait for an answer that never comes")).find((item) => item.stuckReason !== null), 30_000);
    expect(ended.stuckReason).toMatch(/^Gemini CLI \(pid unknown\) ended mid-turn \d+(ms|s) ago$/);
    fs.rmSync(path.dirname(path.dirname(sessions.killed!)), { recursive: true });
    expect(treeSnapshot(geminiDir).filter((entry) => entry.path !== "tmp")).toEqual(before.filter((entry) => entry.path !== "tmp"));
  }, 60_000);
});
