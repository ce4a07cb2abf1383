import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { inspectTelemetry } from "../../lib/sources/telemetryQueue";
import { codexFiles } from "../../lib/telemetry/agentFiles/codexFiles";
import { telemetrySettings } from "../../lib/telemetry/telemetrySettings";
import { anAgentFollower } from "../helpers/agentFollower";
import { aCodexFolder } from "../helpers/codexFolder";
import { eventually } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { readRows } from "../helpers/telemetryRows";

// Codex CLI 0.171.0's own rollout files (tests/fixtures/codex-sessions, written by the real CLI
// with its telemetry off), read by the follower into a real store, and the turns read back as the
// dashboard's `otel` source shows them.

const MINUTE = 60_000;

function aReading(scenarios: string[], now = Date.now()) {
  const { folder, rollouts } = aCodexFolder(path.join(tempParent(), ".codex"), scenarios, now);
  const { file, store, follower, setClock } = anAgentFollower(codexFiles, folder, { now, start: false });
  const turns = () => readRows<Record<string, unknown>>(file, "SELECT * FROM lifecycles ORDER BY seq");
  const steps = () =>
    readRows<{ name: string; summary: string }>(file, "SELECT name, summary FROM steps ORDER BY at, step_key").map((step) => `${step.name}: ${step.summary}`);
  const shown = (at: number) =>
    inspectTelemetry(file, 10 * MINUTE, at, { newest: 50 }).messages.map((message) => ({
      state: message.request.state,
      stuck: message.stuck,
      note: message.note,
    }));
  return { folder, rollouts, file, store, follower, turns, steps, shown, setClock };
}

const threadOf = (rollout: string) => /([0-9a-f-]{36})\.jsonl$/.exec(rollout)![1];

describe("Codex CLI's rollout files, as turns", () => {
  it("a plain prompt: one turn of its thread, completed, its prompt, answer, model, tokens (cached apart), its cost estimated", () => {
    const { turns, steps, store, follower, rollouts } = aReading(["plain"]);
    follower.start();
    expect(turns()).toEqual([
      expect.objectContaining({
        kind: "turn",
        service: "codex_exec",
        state: "completed",
        prompt: "say hello, plainly",
        output: "Hello from the mock.",
        error: null,
        model: "gpt-5-codex",
        calls: 1,
        tools: 0,
        input_tokens: 100,
        output_tokens: 30,
        cache_read_tokens: 20,
        session: threadOf(rollouts.plain!),
        estimated_calls: 1,
      }),
    ]);
    expect(Number(turns()[0]!.cost_usd)).toBeGreaterThan(0);
    expect(steps()).toEqual([
      "task started: a turn began",
      "prompt: a prompt of 18 characters",
      "answer: an answer of 20 characters",
      expect.stringMatching(/^model call: gpt-5-codex, 100 in \/ 30 out, 20 cached, 5 reasoning, \d+ ms$/),
      expect.stringMatching(/^task complete: took \d+ ms, an answer of 20 characters$/),
    ]);
    store.close();
  });

  it("a shell tool: two model calls and the command, its output, exit code and duration", () => {
    const { turns, steps, store, follower } = aReading(["tool"]);
    follower.start();
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "completed",
        prompt: "run echo hi, please",
        calls: 2,
        tools: 1,
        input_tokens: 200,
        output_tokens: 60,
        output: "Hello from the mock.",
      }),
    ]);
    expect(steps()).toContainEqual("tool exec_command: asked for, $ echo hi");
    // From the model's asking (26.846) to the command's end (27.033), as the file's times say; Codex's own `duration` (7 µs) times the process alone.
    expect(steps()).toContainEqual("tool result: exec_command, $ echo hi, ok, 187 ms, output hi");
    store.close();
  });

  it("500 twice, then an answer: completed with its one call (Codex writes no failed attempt in its file)", () => {
    const { turns, store, follower } = aReading(["retried"]);
    follower.start();
    expect(turns()).toEqual([expect.objectContaining({ state: "completed", calls: 1, error: null, output: "Hello from the mock." })]);
    store.close();
  });

  it("500 until Codex gives up: the turn failed with the error Codex printed, no call", () => {
    const { turns, store, follower } = aReading(["exhausted"]);
    follower.start();
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "failed",
        prompt: "fail until it gives up",
        calls: 0,
        error: "We’re currently experiencing high demand, which may cause temporary errors. (internal_server_error)",
      }),
    ]);
    store.close();
  });

  it("a resumed thread (`codex exec resume --last`, the same file): two turns of one session", () => {
    const { turns, store, follower, rollouts } = aReading(["resumed"]);
    follower.start();
    expect(turns().map((turn) => [turn.prompt, turn.state, turn.session, turn.calls])).toEqual([
      ["first prompt of the session", "completed", threadOf(rollouts.resumed!), 1],
      ["second prompt, resumed", "completed", threadOf(rollouts.resumed!), 1],
    ]);
    store.close();
  });

  it("a thread resumed after it was last read from its end (no session_meta ahead): its new turn is still of its session", () => {
    const { rollouts, folder } = aCodexFolder(path.join(tempParent(), ".codex"), ["resumed"]);
    const lines = fs.readFileSync(rollouts.resumed!, "utf8").split("\n");
    const second = lines.findIndex((line, i) => i > 1 && line.includes('"type":"task_started"'));
    fs.writeFileSync(rollouts.resumed!, lines.slice(second).join("\n"));
    const { file, store } = anAgentFollower(codexFiles, folder);
    expect(readRows<Record<string, unknown>>(file, "SELECT prompt, state, session FROM lifecycles")).toEqual([
      { prompt: "second prompt, resumed", state: "completed", session: threadOf(rollouts.resumed!) },
    ]);
    store.close();
  });

  it("killed mid-call, no process holding its file: stuck at once, saying there was no task_complete and no process holds it", () => {
    const now = Date.now();
    const { file, store, follower, shown, steps, folder } = aReading(["killed"], now - 3 * MINUTE);
    follower.start();
    expect(shown(now)).toEqual([
      expect.objectContaining({ state: "processing", stuck: "Codex CLI (no task_complete, and no Codex process holds its file) ended mid-turn 3m ago" }),
    ]);
    // A dashboard started again finds it ended again: still one step of it.
    anAgentFollower(codexFiles, folder, { now, into: { file, store } });
    expect(steps().filter((step) => step.startsWith("process ended: "))).toEqual(["process ended: no task_complete, and no Codex process holds its file"]);
    store.close();
  });

  it("killed mid-call, but a live process holds its file: not ended, and waiting on the model once nothing is written past the stuck time", async () => {
    const now = Date.now();
    const { store, follower, shown, rollouts, setClock } = aReading(["killed"], now - 12 * MINUTE);
    // A process holding the file open, as a running Codex does (its stdin is the file).
    const holder = spawn("sleep", ["60"], { stdio: [fs.openSync(rollouts.killed!, "r"), "ignore", "ignore"] });
    try {
      await eventually(
        () => (fs.readdirSync(`/proc/${holder.pid}/fd`).some((fd) => fs.readlinkSync(`/proc/${holder.pid}/fd/${fd}`) === rollouts.killed) ? true : undefined),
        10_000,
      );
      follower.start();
      expect(shown(now)).toEqual([expect.objectContaining({ state: "processing", stuck: "waiting on the model for 12m" })]);
      // Its process gone: ended mid-turn, naming the pid seen holding it.
      const exited = new Promise((resolve) => holder.once("exit", resolve));
      holder.kill("SIGKILL");
      await exited;
      setClock(now);
      follower.checkRuns();
      expect(shown(now)[0]!.stuck).toMatch(new RegExp(`^Codex CLI \\(pid ${holder.pid}\\) ended mid-turn \\d+m?s ago$`));
    } finally {
      holder.kill("SIGKILL");
      store.close();
    }
  });
});

describe("the settings that read Codex CLI's files", () => {
  const env = (vars: Record<string, string>) => vars as NodeJS.ProcessEnv;
  it("read ~/.codex by default, CODEX_HOME where Codex is told to write, REQWATCH_CODEX_DIR over both; off with the same switch as Claude Code's", () => {
    expect(telemetrySettings(env({ HOME: "/home/ada" })).codexDir).toBe("/home/ada/.codex");
    expect(telemetrySettings(env({ HOME: "/home/ada", CODEX_HOME: "/srv/codex" })).codexDir).toBe("/srv/codex");
    expect(telemetrySettings(env({ HOME: "/home/ada", CODEX_HOME: "/srv/codex", REQWATCH_CODEX_DIR: "/mnt/other" })).codexDir).toBe("/mnt/other");
    expect(telemetrySettings(env({ HOME: "/home/ada", REQWATCH_AGENT_FILES: "off" })).codexDir).toBeNull();
    expect(telemetrySettings(env({ HOME: "/home/ada" }), undefined, "off").codexDir).toBeNull();
  });
});
