import { execFileSync, spawn, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeAgentHistory, type AgentHistory } from "../../bench/agentHistory.mjs";
import { resolveTrackerOptions } from "../../lib/store/options";
import { AgentFileFollower } from "../../lib/telemetry/agentFiles/followAgentFiles";
import { claudeCodeFiles } from "../../lib/telemetry/agentFiles/claudeCodeFiles";
import { codexFiles } from "../../lib/telemetry/agentFiles/codexFiles";
import { geminiFiles } from "../../lib/telemetry/agentFiles/geminiFiles";
import { storeUsage } from "../../lib/telemetry/store/queries/usage";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { BIN } from "../helpers/cli";
import { installedCcusage } from "../helpers/clients";
import { eventually } from "../helpers/processes";

// The bench's generated history of the three agents' files (bench/agentHistory.mjs) read by the
// real ccusage and by reqwatch's own followers: every agent and model it wrote is reported, with the
// tokens the files say.
let parent: string;
let history: AgentHistory;
const NOW = Date.parse("2026-11-20T12:00:00Z");

interface CcusageDay {
  period: string;
  metadata?: { agents?: string[] };
  modelBreakdowns: { modelName: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreationTokens: number }[];
}

beforeAll(() => {
  parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-agent-history-"));
  history = writeAgentHistory(path.join(parent, "home"), { bytes: 30e6, variant: 7, now: NOW });
}, 600_000);
afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

/** Every file under a folder with its bytes' hash, by path from the folder. */
function hashes(folder: string): Record<string, string> {
  const files = fs.readdirSync(folder, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return Object.fromEntries(
    files.map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      return [path.relative(folder, file), crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")];
    }),
  );
}

describe("the generated agent history", () => {
  it("writes the three agents' folders, sessions over two months and some in the last hour", () => {
    expect(history.bytes).toBeGreaterThanOrEqual(30e6);
    for (const agent of ["claude", "codex", "gemini"] as const) expect(history.agents[agent].sessions).toBeGreaterThan(5);
    expect(Object.keys(history.models).sort()).toEqual([
      "claude-haiku-4-5",
      "claude-opus-4-1",
      "claude-sonnet-4-5",
      "gemini-2.5-flash",
      "gemini-2.5-pro",
      "gpt-5",
      "gpt-5-codex",
    ]);
    expect(history.recent.length).toBeGreaterThan(0);
    const times = Object.keys(hashes(path.join(history.home, ".codex", "sessions"))).map((file) => Date.parse(file.split("/").slice(0, 3).join("-")));
    expect(Math.min(...times)).toBeLessThan(NOW - 40 * 86_400_000);
    for (const { file } of history.recent) expect(fs.statSync(file).mtimeMs).toBeLessThanOrEqual(NOW);
  });

  it("is the same bytes for the same variant", () => {
    const again = writeAgentHistory(path.join(parent, "again"), { bytes: 30e6, variant: 7, now: NOW });
    expect(again.bytes).toBe(history.bytes);
    expect(hashes(path.join(parent, "again"))).toEqual(hashes(history.home));
  });

  it("is read by ccusage, which reports every agent and model with the tokens the files say", () => {
    const ccusage = installedCcusage();
    const out = execFileSync(ccusage, ["daily", "--json", "--offline"], {
      env: { PATH: process.env.PATH, HOME: history.home, TZ: "UTC" } as Record<string, string | undefined> as NodeJS.ProcessEnv,
      encoding: "utf8",
      maxBuffer: 64 << 20,
    });
    const report = JSON.parse(out) as { daily: CcusageDay[] };
    const agents = new Set(report.daily.flatMap((day) => day.metadata?.agents ?? []));
    expect([...agents].sort()).toEqual(["claude", "codex", "gemini"]);
    const reported: Record<string, { input: number; output: number; cacheRead: number; cacheWrite: number }> = {};
    for (const day of report.daily) {
      for (const model of day.modelBreakdowns) {
        const sum = (reported[model.modelName] ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
        sum.input += model.inputTokens;
        sum.output += model.outputTokens;
        sum.cacheRead += model.cacheReadTokens;
        sum.cacheWrite += model.cacheCreationTokens;
      }
    }
    const written = Object.fromEntries(
      Object.entries(history.models).map(([model, { input, output, cacheRead, cacheWrite }]) => [model, { input, output, cacheRead, cacheWrite }]),
    );
    expect(reported).toEqual(written);
  });

  it("is read by reqwatch's followers into the same tokens, each model's", () => {
    const keepMs = 90 * 86_400_000;
    const store = new TelemetryStore(path.join(parent, "telemetry.db"), { keepMs, maxBytes: 2e9 });
    const redaction = resolveTrackerOptions({}).redaction;
    const agents = [
      [".claude", claudeCodeFiles],
      [".codex", codexFiles],
      [".gemini", geminiFiles],
    ] as const;
    for (const [folder, agent] of agents)
      new AgentFileFollower({ folder: path.join(history.home, folder), agent: agent as never, store, redaction, keepMs, now: () => NOW }).readAll();
    const read: Record<string, { input: number; output: number; cacheRead: number; cacheWrite: number }> = {};
    store.close();
    const db = new Database(path.join(parent, "telemetry.db"), { readonly: true });
    for (const row of storeUsage(db).byDayAndModel) {
      // A call that failed with no tokens (an attempt Claude Code gave up on) is a call to reqwatch, and no usage to ccusage.
      if (row.inputTokens + row.outputTokens + row.cacheReadTokens + row.cacheWriteTokens === 0) continue;
      const sum = (read[row.model] ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
      sum.input += row.inputTokens;
      sum.output += row.outputTokens;
      sum.cacheRead += row.cacheReadTokens;
      sum.cacheWrite += row.cacheWriteTokens;
    }
    db.close();
    const written = Object.fromEntries(
      Object.entries(history.models).map(([model, { input, output, cacheRead, cacheWrite }]) => [model, { input, output, cacheRead, cacheWrite }]),
    );
    expect(read).toEqual(written);
  });
});

describe("a history more than one thread reads for `reqwatch usage`", () => {
  let big: AgentHistory;
  const stateDir = () => path.join(parent, "big-state");
  // The ledger in the state folder's telemetry folder, as the bench keeps it; nothing else of the machine's.
  const env = () =>
    ({
      PATH: process.env.PATH,
      HOME: big.home,
      TZ: "UTC",
      REQWATCH_STATE_DIR: stateDir(),
      REQWATCH_TELEMETRY_DIR: path.join(stateDir(), "telemetry"),
    }) as Record<string, string | undefined> as NodeJS.ProcessEnv;
  const usageByModel = () => {
    const result = spawnSync(process.execPath, [BIN, "usage", "--by", "model", "--json"], { env: env(), encoding: "utf8", maxBuffer: 64 << 20 });
    expect(result.stderr).toBe("");
    const report = JSON.parse(result.stdout) as {
      rows: { period: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }[];
    };
    return Object.fromEntries(
      report.rows.map((row) => [
        row.period,
        { input: row.inputTokens, output: row.outputTokens, cacheRead: row.cacheReadTokens, cacheWrite: row.cacheWriteTokens },
      ]),
    );
  };

  beforeAll(() => {
    // Past 64 MB, a first report reads on two threads, started while it still lists the files.
    big = writeAgentHistory(path.join(parent, "big"), { bytes: 70e6, variant: 8, now: NOW });
  }, 600_000);

  it("reports the tokens the files say, each model's, after a first report killed part way and in a later one", async () => {
    const first = spawn(process.execPath, [BIN, "usage", "--by", "day", "--json"], { env: env(), stdio: "ignore" });
    const ended = new Promise((resolve) => first.once("exit", resolve));
    // Killed once its ledger is there (it is being written), unless it ended first: the next report reads the files again or goes on.
    await eventually(() => (fs.existsSync(path.join(stateDir(), "telemetry", "usage.db")) || first.exitCode !== null ? true : undefined), 60_000);
    first.kill("SIGKILL");
    await ended;
    const written = Object.fromEntries(
      Object.entries(big.models).map(([model, { input, output, cacheRead, cacheWrite }]) => [model, { input, output, cacheRead, cacheWrite }]),
    );
    expect(usageByModel()).toEqual(written);
    // The ledger kept: read again from it, the same.
    expect(usageByModel()).toEqual(written);
  }, 120_000);
});
