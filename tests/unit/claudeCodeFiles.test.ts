import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { inspectTelemetry } from "../../lib/sources/telemetryQueue";
import { claudeCodeFiles } from "../../lib/telemetry/agentFiles/claudeCodeFiles";
import { processStartTicks } from "../../lib/process/liveness";
import { anAgentFollower } from "../helpers/agentFollower";
import { aClaudeFolder as claudeFolderAt } from "../helpers/claudeFolder";
import { tempParent } from "../helpers/stateDir";
import { readRows } from "../helpers/telemetryRows";

// Claude Code 2.1.332's own session files (tests/fixtures/claude-code-transcripts, written by the
// real CLI with its telemetry off), read by the follower into a real store, and the turns read back
// as the dashboard's `otel` source shows them.

const MINUTE = 60_000;

function aReading(scenarios: string[], now = Date.now()) {
  const { folder, transcripts } = aClaudeFolder(scenarios, now);
  const { file, store, follower, setClock } = anAgentFollower(claudeCodeFiles, folder, { now });
  const turns = () => readRows<Record<string, unknown>>(file, "SELECT * FROM lifecycles ORDER BY seq");
  const steps = () => readRows<{ name: string; summary: string }>(file, "SELECT name, summary FROM steps ORDER BY at, step_key");
  /** What the otel source says of each turn at `at` (its stuck reason by its rules, 10 minutes to be stuck). */
  const shown = (at: number) =>
    inspectTelemetry(file, 10 * MINUTE, at, { newest: 50 }).messages.map((message) => ({
      id: message.request.requestId,
      state: message.request.state,
      stuck: message.stuck,
      note: message.note,
    }));
  return { folder, transcripts, file, store, follower, turns, steps, shown, setClock };
}

/** A Claude folder of recorded scenarios, in a folder removed after the test. */
const aClaudeFolder = (scenarios: string[], now?: number) => claudeFolderAt(path.join(tempParent(), ".claude"), scenarios, now);

describe("Claude Code's session files, as turns", () => {
  it("a plain prompt: one turn, completed, with its prompt, answer, model, tokens, its cost estimated, in its session", () => {
    const { turns, steps, store, transcripts } = aReading(["plain"]);
    expect(turns()).toEqual([
      expect.objectContaining({
        kind: "turn",
        service: "claude-code",
        state: "completed",
        prompt: "say hello, plainly",
        output: "Hello from the mock.",
        error: null,
        model: "claude-sonnet-4-5",
        calls: 1,
        tools: 0,
        input_tokens: 120,
        output_tokens: 30,
        session: path.basename(transcripts.plain!, ".jsonl"),
        estimated_calls: 1,
      }),
    ]);
    // Not $0: the shipped price table's estimate (Sonnet 4.5: $3 / $15 a million).
    expect(turns()[0]!.cost_usd).toBeCloseTo(0.00081, 6);
    expect(steps().map((step) => step.name)).toEqual(["prompt", "model call"]);
    store.close();
  });

  it("a tool use: two model calls and the tool, its command, its result and how long it took", () => {
    const { turns, steps, store } = aReading(["tool"]);
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "completed",
        prompt: "run echo hi, please",
        calls: 2,
        tools: 1,
        input_tokens: 240,
        output_tokens: 60,
        output: "Hello from the mock.",
      }),
    ]);
    const said = steps().map((step) => `${step.name}: ${step.summary}`);
    expect(said).toContainEqual("tool Bash: asked for, $ echo hi");
    expect(said).toContainEqual(expect.stringMatching(/^tool result: Bash, ok, \d+ ms$/));
    store.close();
  });

  it("529 twice, then an answer: one call, completed, at its third attempt, each failure a step", () => {
    const { turns, steps, store } = aReading(["retry"]);
    expect(turns()).toEqual([expect.objectContaining({ state: "completed", calls: 1, attempt: 3, error: null })]);
    expect(
      steps()
        .filter((step) => step.name === "api error")
        .map((step) => step.summary),
    ).toEqual([
      expect.stringMatching(/^529 Overloaded, attempt 1 of 11, retrying in \d+ ms$/),
      expect.stringMatching(/^529 Overloaded, attempt 2 of 11, retrying/),
    ]);
    store.close();
  });

  it("retries exhausted: failed, with the error Claude Code gave and the attempts it made", () => {
    const { turns, store } = aReading(["exhausted"]);
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "failed",
        attempt: 3,
        output: null,
        error: expect.stringMatching(/^API Error: 529 Overloaded\. This is a server-side /),
      }),
    ]);
    store.close();
  });

  it("a slash command Claude Code ran itself: a turn completed with its output, no model call", () => {
    const { turns, steps, store } = aReading(["local-command"]);
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "completed",
        calls: 0,
        prompt: expect.stringMatching(/^<command-name>\/usage<\/command-name>/),
        output: expect.stringMatching(/^Estimated cost: +\$0\.0000/),
      }),
    ]);
    expect(steps().map((step) => `${step.name}: ${step.summary}`)).toEqual([
      "command: /usage",
      expect.stringMatching(/^local command: an output of \d+ characters$/),
    ]);
    store.close();
  });

  it("a resumed session: two turns in one session", () => {
    const { turns, store } = aReading(["resumed"]);
    const rows = turns();
    expect(rows.map((row) => [row.prompt, row.state])).toEqual([
      ["say hello, plainly", "completed"],
      ["and a second prompt", "completed"],
    ]);
    expect(new Set(rows.map((row) => row.session)).size).toBe(1);
    store.close();
  });

  it("a subagent: its run an agent lifecycle of the session with its own call, the turn that launched it completed, its end a prompt of its own", () => {
    const { turns, store, transcripts } = aReading(["subagent"]);
    const session = path.basename(transcripts.subagent!, ".jsonl");
    // In the order they began (the files are read in whatever order the folder lists them).
    const begun = turns().sort((a, b) => Number(a.started_at) - Number(b.started_at));
    expect(begun.map((row) => [row.kind, row.state, row.prompt, row.calls, row.tools])).toEqual([
      ["turn", "completed", "use a subagent to say hi", 2, 1],
      ["agent", "completed", "SUBTASK: say hi", 1, 0],
      ["turn", "completed", expect.stringMatching(/^<task-notification>/), 1, 0],
    ]);
    expect(new Set(turns().map((row) => row.session))).toEqual(new Set([session]));
    // Every call the mock answered, once: 4 of 120 in / 30 out.
    expect(turns().reduce((sum, row) => sum + Number(row.input_tokens), 0)).toBe(480);
    store.close();
  });

  it("keeps only what the redaction stage leaves of a secret in a prompt, a tool's command and its result", () => {
    const now = Date.now();
    const { folder, transcripts } = aClaudeFolder(["tool"], now);
    const PASSWORD = "Zq8vLm2Rt5-hunter";
    const TOKEN = "tok_9f8e7d6c5b4a39281706";
    const text = fs
      .readFileSync(transcripts.tool!, "utf8")
      .replaceAll('"content":"run echo hi, please"', `"content":"run it with PGPASSWORD=${PASSWORD}"`)
      .replace('"command":"echo hi"', `"command":"PGPASSWORD=${PASSWORD} psql -h db"`)
      .replace('"content":"hi"', `"content":"GET /callback?token=${TOKEN} 200"`);
    fs.writeFileSync(transcripts.tool!, text);
    const { file, store } = anAgentFollower(claudeCodeFiles, folder, { now });
    store.close();
    const tables = readRows<{ name: string }>(file, "SELECT name FROM sqlite_master WHERE type = 'table'").map((row) => row.name);
    const stored = tables.map((table) => JSON.stringify(readRows(file, `SELECT * FROM ${table}`))).join("\n");
    expect(stored).toContain("run it with PGPASSWORD=[redacted: password]");
    expect(stored).toContain("PGPASSWORD=[redacted: password] psql -h db");
    expect(stored).toContain("GET /callback?token=[redacted: token] 200");
    expect(stored).not.toContain(PASSWORD);
    expect(stored).not.toContain(TOKEN);
  });

  it("a run killed mid-call: its turn stuck at once, saying which process ended and when", () => {
    const now = Date.now();
    const { shown, store, follower, setClock, turns } = aReading(["killed"], now);
    // The session file says busy; its process (pid 24624, started at another time if the pid is in use) is gone.
    expect(turns()).toEqual([expect.objectContaining({ state: "processing", abandoned_by: "Claude Code (pid 24624)" })]);
    setClock(now + 3 * MINUTE);
    follower.checkRuns();
    const [turn] = shown(now + 3 * MINUTE);
    expect(turn).toMatchObject({ state: "processing", stuck: "Claude Code (pid 24624) ended mid-turn 3m ago" });
    store.close();
  });

  it("a busy session file whose pid runs the same process is left alone; one whose pid another process took since is ended; another machine's is left alone", () => {
    const now = Date.now();
    const anotherMachine = { pidDomain: "linux:00000000000000000000000000000000:pid:[1]" };
    for (const [procStart, ended, domain] of [
      [processStartTicks(process.pid)!, false, {}],
      ["1", true, {}],
      ["1", false, anotherMachine],
    ] as const) {
      const { folder } = aClaudeFolder(["killed"], now);
      // The killed run's session file, naming this test's own process (alive), started when it did or not.
      const sessions = path.join(folder, "sessions");
      const said = JSON.parse(fs.readFileSync(path.join(sessions, "24624.json"), "utf8")) as Record<string, unknown>;
      fs.rmSync(path.join(sessions, "24624.json"));
      fs.writeFileSync(path.join(sessions, `${process.pid}.json`), JSON.stringify({ ...said, pid: process.pid, procStart, ...domain }));
      const { file, store } = anAgentFollower(claudeCodeFiles, folder, { now });
      expect(readRows<{ abandoned_by: string | null }>(file, "SELECT abandoned_by FROM lifecycles")).toEqual([
        { abandoned_by: ended ? `Claude Code (pid ${process.pid})` : null },
      ]);
      store.close();
    }
  });

  it("a turn whose process lives but wrote nothing for longer than the stuck threshold: waiting on the model, with its attempt and last error", () => {
    const now = Date.now();
    const { folder, transcripts } = aClaudeFolder(["retry"], now);
    // The run as it stood after its second 529: the answer not yet written.
    const lines = fs.readFileSync(transcripts.retry!, "utf8").split("\n");
    const cut = lines.findIndex((line) => line.includes('"retryAttempt":2'));
    fs.writeFileSync(transcripts.retry!, lines.slice(0, cut + 1).join("\n") + "\n");
    const { file, store } = anAgentFollower(claudeCodeFiles, folder, { now });
    const at = (ms: number) => inspectTelemetry(file, 10 * MINUTE, ms, { newest: 5 }).messages[0]!;
    expect(at(now + 5 * MINUTE)).toMatchObject({ request: { state: "processing" }, stuck: null });
    expect(at(now + 12 * MINUTE).stuck).toMatch(/^waiting on the model for 12m( \d+s)?, attempt 3, last error 529 Overloaded$/);
    store.close();
  });

  it("a turn whose tool has run past the stuck threshold: waiting on that tool", () => {
    const now = Date.now();
    const { folder, transcripts } = aClaudeFolder(["tool"], now);
    // The run as it stood while Bash ran: the tool asked for, its result not yet written.
    const lines = fs.readFileSync(transcripts.tool!, "utf8").split("\n");
    const asked = lines.findIndex((line) => line.includes('"type":"tool_use"'));
    fs.writeFileSync(transcripts.tool!, lines.slice(0, asked + 1).join("\n") + "\n");
    const { file, store } = anAgentFollower(claudeCodeFiles, folder, { now });
    expect(inspectTelemetry(file, 10 * MINUTE, now + 15 * MINUTE, { newest: 5 }).messages[0]!.stuck).toMatch(/^waiting on tool Bash for 15m( \d+s)?$/);
    store.close();
  });
});
