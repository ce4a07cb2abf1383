import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { inspectTelemetry } from "../../lib/sources/telemetryQueue";
import { GAVE_UP, geminiFiles } from "../../lib/telemetry/agentFiles/geminiFiles";
import { anAgentFollower } from "../helpers/agentFollower";
import { aGeminiFolder } from "../helpers/geminiFolder";
import { tempParent } from "../helpers/stateDir";
import { readRows } from "../helpers/telemetryRows";

// Gemini CLI 0.61.0's own session files (tests/fixtures/gemini-sessions, written by the real CLI
// with its telemetry off), read by the follower into a real store, and the turns read back as the
// dashboard's `otel` source shows them.

const MINUTE = 60_000;

function aReading(scenarios: string[], now = Date.now()) {
  const { folder, sessions } = aGeminiFolder(path.join(tempParent(), ".gemini"), scenarios, now);
  const { file, store, follower, setClock } = anAgentFollower(geminiFiles, folder, { now });
  const turns = () => readRows<Record<string, unknown>>(file, "SELECT * FROM lifecycles ORDER BY started_at");
  const steps = () =>
    readRows<{ name: string; summary: string }>(file, "SELECT name, summary FROM steps ORDER BY at, step_key").map((step) => `${step.name}: ${step.summary}`);
  const shown = (at: number) =>
    inspectTelemetry(file, 10 * MINUTE, at, { newest: 50 }).messages.map((message) => ({
      id: message.request.requestId,
      state: message.request.state,
      stuck: message.stuck,
      note: message.note,
    }));
  return { folder, sessions, file, store, follower, turns, steps, shown, setClock };
}

const sessionOf = (file: string) => JSON.parse(fs.readFileSync(file, "utf8").split("\n")[0]!).sessionId as string;

describe("Gemini CLI's session files, as turns", () => {
  it("a plain prompt: one turn, completed, with its prompt, answer, model, tokens (cached too), its cost estimated, in its session", () => {
    const { turns, steps, store, sessions } = aReading(["plain"]);
    expect(turns()).toEqual([
      expect.objectContaining({
        kind: "turn",
        service: "gemini-cli",
        state: "completed",
        prompt: "say hello, plainly",
        output: "Hello from the mock.",
        error: null,
        model: "gemini-3.8-flash",
        calls: 1,
        tools: 0,
        input_tokens: 100,
        output_tokens: 30,
        cache_read_tokens: 20,
        session: sessionOf(sessions.plain!),
        estimated_calls: 1,
      }),
    ]);
    expect(Number(turns()[0]!.cost_usd)).toBeGreaterThan(0);
    // The history `$set` copies (the session's context) and the header tell of no turn.
    expect(steps()).toEqual([
      "prompt: a prompt of 18 characters",
      expect.stringMatching(/^model call: gemini-3\.8-flash, 100 in \/ 30 out \(20 cached\), \d+ ms$/),
    ]);
    store.close();
  });

  it("two tools, one failed: both model calls once (the message written again with its tool calls), each tool with its status, result and duration", () => {
    const { turns, steps, store } = aReading(["tool"]);
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "completed",
        prompt: "read the two files, please",
        calls: 2,
        tools: 2,
        input_tokens: 200,
        output_tokens: 60,
        output: "Hello from the mock.",
      }),
    ]);
    expect(steps()).toContainEqual(expect.stringMatching(/^tool read_file: ok, note\.txt, \d+ ms$/));
    expect(steps()).toContainEqual(expect.stringMatching(/^tool read_file: error: File not found: .*missing\.txt, missing\.txt, \d+ ms$/));
    store.close();
  });

  it("a model message written first without its tokens, then with them: one call, its tokens counted once", () => {
    const now = Date.now();
    const { folder, sessions } = aGeminiFolder(path.join(tempParent(), ".gemini"), ["plain"], now);
    // As the CLI writes it when the usage comes after the message (recordMessageTokens): the message, then again with its tokens.
    const lines = fs.readFileSync(sessions.plain!, "utf8").split("\n");
    const answer = lines.findIndex((line) => line.includes('"type":"gemini"'));
    const without = JSON.parse(lines[answer]!) as Record<string, unknown>;
    delete without.tokens;
    lines.splice(answer, 0, JSON.stringify(without));
    fs.writeFileSync(sessions.plain!, lines.join("\n"));
    const { file, store } = anAgentFollower(geminiFiles, folder, { now });
    expect(readRows(file, "SELECT state, calls, input_tokens, output_tokens, cache_read_tokens FROM lifecycles")).toEqual([
      { state: "completed", calls: 1, input_tokens: 100, output_tokens: 30, cache_read_tokens: 20 },
    ]);
    store.close();
  });

  it("a turn whose model asked for tools, not yet written as run, past the stuck threshold: waiting on its tools", () => {
    const now = Date.now();
    const { folder, sessions } = aGeminiFolder(path.join(tempParent(), ".gemini"), ["tool"], now);
    // The run as it stood while the tools ran: the model's message with no text, its toolCalls not yet written.
    const lines = fs.readFileSync(sessions.tool!, "utf8").split("\n");
    const asked = lines.findIndex((line) => line.includes('"type":"gemini"'));
    fs.writeFileSync(sessions.tool!, lines.slice(0, asked + 1).join("\n") + "\n");
    // Its process is not looked for here (no runs): only what the file says.
    const { file, store } = anAgentFollower({ ...geminiFiles, runs: undefined }, folder, { now });
    expect(inspectTelemetry(file, 10 * MINUTE, now + 15 * MINUTE, { newest: 5 }).messages[0]!.stuck).toMatch(/^waiting on its tools for 15m( \d+s)?$/);
    store.close();
  });

  it("503 twice, then an answer: completed with its one call (Gemini CLI writes no failed attempt)", () => {
    const { turns, store } = aReading(["retry"]);
    expect(turns()).toEqual([expect.objectContaining({ state: "completed", calls: 1, error: null, output: "Hello from the mock." })]);
    store.close();
  });

  it("a resumed session: two turns in one session", () => {
    const { turns, store, sessions } = aReading(["resumed"]);
    expect(turns().map((row) => [row.prompt, row.state, row.session])).toEqual([
      ["first prompt of the session", "completed", sessionOf(sessions.resumed!)],
      ["second prompt of the session", "completed", sessionOf(sessions.resumed!)],
    ]);
    store.close();
  });

  it("a run killed mid-call, no Gemini CLI process left in its project: stuck at once, saying no process answered it", () => {
    const now = Date.now();
    const { shown, store, follower, setClock, turns, steps } = aReading(["killed"], now);
    expect(turns()).toEqual([
      expect.objectContaining({ state: "processing", prompt: "wait for an answer that never comes", abandoned_by: "Gemini CLI (pid unknown)" }),
    ]);
    expect(steps()).toContain("process ended: no answer, and no Gemini CLI process runs in its project");
    setClock(now + 3 * MINUTE);
    follower.checkRuns();
    expect(shown(now + 3 * MINUTE)).toEqual([expect.objectContaining({ state: "processing", stuck: "Gemini CLI (pid unknown) ended mid-turn 3m ago" })]);
    store.close();
  });

  it("a run given up after 503s writes its prompt, then its history without it: failed then, saying its files keep no error; never stuck, never completed", () => {
    const { turns, steps, store, follower } = aReading(["exhausted"]);
    follower.checkRuns();
    expect(turns()).toEqual([expect.objectContaining({ state: "failed", output: null, error: GAVE_UP, abandoned_by: null, waiting_on: null })]);
    // It ended when the CLI wrote its history again (its `lastUpdated`), 12 s after the prompt, as the run did.
    const [turn] = turns();
    expect(Number(turn!.finished_at) - Number(turn!.started_at)).toBe(12_442);
    expect(steps()).toEqual(["prompt: a prompt of 29 characters", "gave up: the prompt was taken out of the CLI's history, unanswered"]);
    store.close();
  });

  it("a killed run's prompt, then the session resumed (its header, then its history as it starts, without that prompt): no give-up, the first run ended mid-turn", () => {
    const now = Date.now();
    const { folder, sessions } = aGeminiFolder(path.join(tempParent(), ".gemini"), ["killed"], now);
    const lines = fs.readFileSync(sessions.killed!, "utf8").trim().split("\n");
    // As a resumed run starts: its header again, then the history it was given so far.
    fs.appendFileSync(sessions.killed!, `${lines[0]}\n${lines[1]}\n`);
    const { file, store } = anAgentFollower(geminiFiles, folder, { now });
    expect(readRows<Record<string, unknown>>(file, "SELECT * FROM lifecycles")).toEqual([
      expect.objectContaining({ state: "processing", error: null, abandoned_by: "Gemini CLI (pid unknown)" }),
    ]);
    store.close();
  });

  it("a prompt with no answer whose process lives (a Gemini CLI process running in its project): not ended; past the stuck threshold, waiting on the model", () => {
    const now = Date.now();
    const root = tempParent();
    // A stand-in for a live Gemini CLI: a process named gemini, its HOME the folder's parent, running in the project.
    const { folder } = aGeminiFolder(path.join(root, ".gemini"), ["killed"], now);
    const project = path.join(root, "project");
    fs.mkdirSync(project);
    const [slug] = fs.readdirSync(path.join(folder, "tmp"));
    fs.writeFileSync(path.join(folder, "tmp", slug!, ".project_root"), project);
    const bin = path.join(root, "bin", "gemini");
    fs.mkdirSync(path.dirname(bin));
    fs.writeFileSync(bin, "setInterval(() => {}, 1000);\n");
    const child = spawn(process.execPath, [bin], { cwd: project, env: { HOME: root } as Record<string, string> as NodeJS.ProcessEnv, stdio: "ignore" });
    try {
      const { file, store, follower, setClock } = anAgentFollower(geminiFiles, folder, { now });
      expect(readRows(file, "SELECT abandoned_by FROM lifecycles")).toEqual([{ abandoned_by: null }]);
      expect(inspectTelemetry(file, 10 * MINUTE, now + 12 * MINUTE, { newest: 5 }).messages[0]!.stuck).toMatch(/^waiting on the model for 12m( \d+s)?$/);
      // Then it is killed: the turn names its pid, ended when it was noticed gone.
      child.kill("SIGKILL");
      const gone = Date.now() + 10_000;
      while (fs.existsSync(`/proc/${child.pid}/cmdline`) && fs.readFileSync(`/proc/${child.pid}/cmdline`, "utf8") !== "" && Date.now() < gone)
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      setClock(now + MINUTE);
      follower.checkRuns();
      expect(readRows(file, "SELECT abandoned_by FROM lifecycles")).toEqual([{ abandoned_by: `Gemini CLI (pid ${child.pid})` }]);
      expect(inspectTelemetry(file, 10 * MINUTE, now + 4 * MINUTE, { newest: 5 }).messages[0]!.stuck).toBe(
        `Gemini CLI (pid ${child.pid}) ended mid-turn 3m ago`,
      );
      store.close();
    } finally {
      child.kill("SIGKILL");
    }
  });
});
