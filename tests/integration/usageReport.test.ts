import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UsageReport, UsageSumsRow } from "../../lib/telemetry/usage/usageReport";
import { aClaudeFolder } from "../helpers/claudeFolder";
import { installedCcusage } from "../helpers/clients";
import { runCli } from "../helpers/cli";
import { aCodexFolder } from "../helpers/codexFolder";
import { aGeminiFolder } from "../helpers/geminiFolder";
import { tempParent, tempStateDir } from "../helpers/stateDir";
import { aUsageHistory, LONG_CONTEXT_CALL } from "../helpers/usageHistory";

// The real ccusage (pinned, from the npm registry) and `reqwatch usage` read the same home folder:
// the real CLIs' own files (tests/fixtures) and months of generated history. Their figures must be
// the same: tokens exactly, costs to 1e-9, but for the one place ccusage prices against the files
// (docs/AGENT-FILES.md, "Usage"): a call above 200k input tokens.

interface CcusageSums {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  totalTokens: number;
  totalCost: number;
}
interface CcusageRow extends CcusageSums {
  period: string;
  agent?: string;
  agents?: (CcusageSums & { agent: string })[];
  modelBreakdowns: (Omit<CcusageSums, "totalTokens" | "totalCost"> & { modelName: string; cost: number })[];
}

/** What ccusage overcharges nothing and undercharges the long call by: it prices only the tokens past 200k of each kind at the long rate, and not the output. */
const LONG_CALL_SHORTFALL =
  (LONG_CONTEXT_CALL.input * 6 + LONG_CONTEXT_CALL.output * 22.5 - (200_000 * 3 + (LONG_CONTEXT_CALL.input - 200_000) * 6 + LONG_CONTEXT_CALL.output * 15)) /
  1e6;
const AGENTS: Record<string, string> = { claude: "claude-code", codex: "codex", gemini: "gemini" };

let home: string;
let ccusageBin: string;
let env: NodeJS.ProcessEnv;
let now: number;
/** The long call's day in a time zone. */
const longCallDay = (timeZone = "UTC") =>
  new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(now - LONG_CONTEXT_CALL.daysAgo * 24 * 60 * 60_000);

beforeAll(() => {
  ccusageBin = installedCcusage();
  home = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-usage-"));
  now = Date.now();
  aClaudeFolder(path.join(home, ".claude"), ["plain", "tool", "retry", "exhausted", "killed", "resumed", "subagent", "local-command"], now);
  // Each Codex run an hour apart: run at one instant, two threads' equal calls are one to ccusage's daily report (see the last test).
  ["plain", "tool", "retried", "killed", "exhausted", "resumed"].forEach((scenario, i) =>
    aCodexFolder(path.join(home, ".codex"), [scenario], now - i * 60 * 60_000),
  );
  aGeminiFolder(path.join(home, ".gemini"), ["plain", "tool", "retry", "killed", "exhausted", "resumed"], now);
  aUsageHistory(home, now);
  // Only the home folder names the agents' folders (the tests' own setup turns reading them off).
  env = { ...process.env, HOME: home, REQWATCH_AGENT_FILES: "on", REQWATCH_STATE_DIR: path.join(home, "no-state-folder"), TZ: "UTC" };
  for (const name of ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "REQWATCH_CLAUDE_DIR", "REQWATCH_CODEX_DIR", "REQWATCH_GEMINI_DIR"])
    delete env[name];
}, 600_000);
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

function ccusage(args: string[]): Record<string, CcusageRow[]> {
  return JSON.parse(execFileSync(ccusageBin, [...args, "--json", "--offline"], { env, encoding: "utf8" })) as Record<string, CcusageRow[]>;
}

function reqwatch(args: string[], stateDir?: string): UsageReport {
  const result = runCli(["usage", "--json", ...args], { env: stateDir ? { ...env, REQWATCH_STATE_DIR: stateDir } : env });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as UsageReport;
}

/** A row's figures as ccusage names them; the cost as ccusage would have it (its long-call price where the row holds that call). */
function asCcusage(row: UsageSumsRow, holdsLongCall: boolean) {
  return {
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    cacheReadTokens: row.cacheReadTokens,
    cacheCreationTokens: row.cacheWriteTokens,
    totalTokens: row.totalTokens,
    totalCost: row.costUsd - (holdsLongCall ? LONG_CALL_SHORTFALL : 0),
  };
}

function expectSame(theirs: CcusageSums, ours: ReturnType<typeof asCcusage>, what: string): void {
  const { totalCost, ...tokens } = ours;
  expect({
    what,
    inputTokens: theirs.inputTokens,
    outputTokens: theirs.outputTokens,
    cacheReadTokens: theirs.cacheReadTokens,
    cacheCreationTokens: theirs.cacheCreationTokens,
    totalTokens: theirs.totalTokens,
  }).toEqual({ what, ...tokens });
  expect(Math.abs(theirs.totalCost - totalCost), `${what}: cost ${totalCost} against ccusage's ${theirs.totalCost}`).toBeLessThan(1e-9);
}

/** Each of ccusage's rows against reqwatch's of the same key, and per agent; the same keys on both sides. */
function compareRows(theirs: CcusageRow[], ours: UsageReport, keyOf: (row: CcusageRow) => string, holdsLongCall: (key: string) => boolean): void {
  expect(ours.rows.map((row) => row.period).sort()).toEqual(theirs.map(keyOf).sort());
  for (const row of theirs) {
    const key = keyOf(row);
    const mine = ours.rows.find((candidate) => candidate.period === key)!;
    expectSame(row, asCcusage(mine, holdsLongCall(key)), key);
    for (const agent of row.agents ?? []) {
      const ourAgent = mine.agents.find((candidate) => candidate.agent === AGENTS[agent.agent])!;
      expectSame(agent, asCcusage(ourAgent, agent.agent === "claude" && holdsLongCall(key)), `${key} ${agent.agent}`);
    }
  }
}

describe("reqwatch usage and ccusage on the same files", () => {
  it("say the same tokens and cost for each day, per agent, in UTC and in zones behind and ahead of it", () => {
    for (const zone of ["UTC", "America/New_York", "Asia/Kolkata"]) {
      const theirs = ccusage(["daily", "--by-agent", "--timezone", zone]).daily!;
      const ours = reqwatch(["--by", "day", "--timezone", zone]);
      expect(ours.timezone).toBe(zone);
      expect(theirs.length).toBeGreaterThan(20);
      compareRows(
        theirs,
        ours,
        (row) => row.period,
        (key) => key === longCallDay(zone),
      );
    }
  });

  it("say the same for each month, and the same totals", () => {
    const theirs = ccusage(["monthly", "--by-agent", "--timezone", "UTC"]);
    const ours = reqwatch(["--by", "month", "--timezone", "UTC"]);
    expect(ours.rows.length).toBeGreaterThanOrEqual(3);
    compareRows(
      theirs.monthly!,
      ours,
      (row) => row.period,
      (key) => key === longCallDay().slice(0, 7),
    );
    expectSame((theirs as unknown as { totals: CcusageSums }).totals, asCcusage(ours.totals, true), "totals");
  });

  it("say the same for each session of each agent", () => {
    const theirs = ccusage(["session", "--timezone", "UTC"]).session!;
    const ours = reqwatch(["--by", "session"]);
    // ccusage names a Codex session by its rollout file (`2026/11/28/rollout-<time>-<thread>`); reqwatch by its thread.
    compareRows(
      theirs,
      ours,
      (row) => /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(row.period)?.[1] ?? row.period,
      (key) => key === "gen-long",
    );
    for (const row of theirs) expect(ours.rows.find((mine) => row.period.endsWith(mine.period))!.agentsUsed).toEqual([AGENTS[row.agent!]]);
  });

  it("say the same for each model", () => {
    const byModel = new Map<string, CcusageSums>();
    for (const day of ccusage(["daily", "--timezone", "UTC"]).daily!) {
      for (const model of day.modelBreakdowns) {
        const sums = byModel.get(model.modelName) ?? {
          inputTokens: 0,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheCreationTokens: 0,
          totalTokens: 0,
          totalCost: 0,
        };
        sums.inputTokens += model.inputTokens;
        sums.outputTokens += model.outputTokens;
        sums.cacheReadTokens += model.cacheReadTokens;
        sums.cacheCreationTokens += model.cacheCreationTokens;
        sums.totalCost += model.cost;
        byModel.set(model.modelName, sums);
      }
    }
    const ours = reqwatch(["--by", "model"]);
    // Claude Code's <synthetic> error lines (no call, no tokens) count in no row.
    expect(ours.rows.map((row) => row.period)).not.toContain("(not said)");
    const named = ours.rows;
    expect(named.map((row) => row.period).sort()).toEqual([...byModel.keys()].sort());
    for (const row of named) {
      // ccusage's model breakdowns say no total: the rest must be the same.
      const mine = asCcusage(row, row.period === LONG_CONTEXT_CALL.model);
      expectSame(byModel.get(row.period)!, { ...mine, totalTokens: 0 }, row.period);
    }
    // reqwatch does not call an unknown price $0: the model no table knows is unpriced.
    const unknown = ours.rows.find((row) => row.period === "claude-unreleased-9")!;
    expect(unknown).toMatchObject({ calls: 1, unpricedCalls: 1, costUsd: 0 });
    expect(LONG_CALL_SHORTFALL).toBeCloseTo(1.5225 - 0.915, 9);
  });

  it("say the same between two dates", () => {
    const days = reqwatch(["--by", "day", "--timezone", "UTC"]).rows.map((row) => row.period);
    const [since, until] = [days[3]!, days[days.length - 4]!];
    const theirs = ccusage(["daily", "--by-agent", "--timezone", "UTC", "--since", since.replace(/-/g, ""), "--until", until.replace(/-/g, "")]).daily!;
    const ours = reqwatch(["--by", "day", "--timezone", "UTC", "--since", since, "--until", until]);
    expect(ours.rows[0]!.period).toBe(since);
    expect(ours.rows.at(-1)!.period).toBe(until);
    compareRows(
      theirs,
      ours,
      (row) => row.period,
      (key) => key === longCallDay(),
    );
  });
});

describe("where ccusage differs from the files", () => {
  it("counts each Codex thread's calls, as ccusage's session report does and its daily report does not when threads ran at one instant", () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-usage-codex-"));
    try {
      // Three real runs (three threads, each with its own rollout file) whose calls said the same tokens, written the same second.
      aCodexFolder(path.join(other, ".codex"), ["plain", "retried", "resumed"]);
      const at = { ...env, HOME: other };
      const run = (args: string[]) =>
        JSON.parse(execFileSync(ccusageBin, [...args, "--json", "--offline", "--timezone", "UTC"], { env: at, encoding: "utf8" })) as Record<
          string,
          CcusageRow[]
        >;
      const bySession = run(["session"]).session!.reduce((sum, row) => sum + row.inputTokens, 0);
      const byDay = run(["daily"]).daily!.reduce((sum, row) => sum + row.inputTokens, 0);
      const result = runCli(["usage", "--json", "--timezone", "UTC"], { env: at });
      const ours = (JSON.parse(result.stdout) as UsageReport).totals.inputTokens;
      expect({ bySession, ours }).toEqual({ bySession: 400, ours: 400 });
      expect(byDay).toBe(300);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});

describe("the ledger", () => {
  it("keeps what it read in the state folder, reads only what the files gained, counts a line written again once and skips one too long", () => {
    const stateDir = tempStateDir();
    const before = reqwatch(["--by", "month", "--timezone", "UTC"], stateDir);
    expect(fs.existsSync(path.join(stateDir, "usage.db"))).toBe(true);
    expect(before.read.malformed).toBe(1);
    // Two lines appended: a new answer, and a copy of one already counted.
    const file = path.join(home, ".claude", "projects", "-work-shop", "gen-session-1.jsonl");
    const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
    const copy = JSON.parse(lines[1]!) as { timestamp: string; message: { id: string; usage: Record<string, number> } };
    const added = {
      ...copy,
      timestamp: new Date().toISOString(),
      requestId: "req_added",
      message: { ...copy.message, id: "msg_added", usage: { input_tokens: 7, output_tokens: 11, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
    };
    // And a line past the 8 MB bound (an answer that says usage): skipped, counted.
    const huge = {
      ...added,
      requestId: "req_huge",
      message: { ...added.message, id: "msg_huge", content: [{ type: "text", text: "x".repeat(9 * 1024 * 1024) }] },
    };
    fs.appendFileSync(file, `${JSON.stringify(added)}\n${lines[1]}\n${JSON.stringify(huge)}\n`);
    try {
      const after = reqwatch(["--by", "month", "--timezone", "UTC"], stateDir);
      expect(after.totals.inputTokens - before.totals.inputTokens).toBe(7);
      expect(after.totals.outputTokens - before.totals.outputTokens).toBe(11);
      expect(after.totals.calls - before.totals.calls).toBe(1);
      expect(after.read.lines - before.read.lines).toBe(2);
      expect(after.read.oversized - before.read.oversized).toBe(1);
      // The same as reading every file anew.
      expect(reqwatch(["--by", "month", "--timezone", "UTC"]).totals).toEqual(after.totals);
    } finally {
      fs.writeFileSync(file, `${lines.join("\n")}\n`);
    }
  });

  it("keeps counting a transcript its agent deleted since (Claude Code removes those past its cleanupPeriodDays), where a fresh read no longer can", () => {
    const stateDir = tempStateDir();
    const before = reqwatch(["--by", "month", "--timezone", "UTC"], stateDir);
    const file = path.join(home, ".claude", "projects", "-work-shop", "gen-session-1.jsonl");
    const aside = path.join(tempParent(), "gen-session-1.jsonl");
    fs.renameSync(file, aside);
    try {
      expect(reqwatch(["--by", "month", "--timezone", "UTC"], stateDir).totals).toEqual(before.totals);
      const fresh = reqwatch(["--by", "month", "--timezone", "UTC"], tempStateDir()).totals;
      expect(fresh.calls).toBeLessThan(before.totals.calls);
    } finally {
      fs.renameSync(aside, file);
    }
    // Back where it was: counted once.
    expect(reqwatch(["--by", "month", "--timezone", "UTC"], stateDir).totals).toEqual(before.totals);
  });

  it("reads no agent's files when REQWATCH_AGENT_FILES is off, one agent's with --agent, and keeps its ledger in the cache folder with no state folder, or beside the user's telemetry store", () => {
    const off = runCli(["usage", "--json"], { env: { ...env, REQWATCH_AGENT_FILES: "off" } });
    expect(off.code).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ agents: [], rows: [] });
    const codex = reqwatch(["--agent", "codex", "--by", "model"]);
    expect(codex.agents).toEqual(["codex"]);
    expect(codex.rows.map((row) => row.period).sort()).toEqual(["gpt-5", "gpt-5-codex"]);
    // With no state folder, the ledger is kept in reqwatch's cache folder (the tests' own), shared by every home it read.
    expect(fs.existsSync(path.join(process.env.REQWATCH_CACHE_DIR!, "usage", "usage.db"))).toBe(true);
    // Beside the user's one store of received telemetry when there is one, its folder private to the user.
    const shared = path.join(tempParent(), "telemetry");
    const beside = runCli(["usage", "--json", "--agent", "codex"], { env: { ...env, REQWATCH_TELEMETRY_DIR: shared } });
    expect(beside.code).toBe(0);
    expect((JSON.parse(beside.stdout) as UsageReport).totals).toEqual(codex.totals);
    expect(fs.existsSync(path.join(shared, "usage.db"))).toBe(true);
    expect(fs.statSync(shared).mode & 0o777).toBe(0o700);
  });

  it("keeps its ledger in the state folder without opening the folder's index, and in the cache folder for a folder another program writes, which it leaves as it was", () => {
    const stateDir = tempStateDir();
    const report = reqwatch(["--agent", "codex", "--by", "model"], stateDir);
    expect(fs.existsSync(path.join(stateDir, "usage.db"))).toBe(true);
    // Only the ledger: the index a command that reads requests would build is not.
    expect(fs.existsSync(path.join(stateDir, "index.db"))).toBe(false);
    const foreign = path.join(tempParent(), "state");
    fs.mkdirSync(foreign);
    fs.writeFileSync(path.join(foreign, "theirs.json"), "{}\n");
    expect(reqwatch(["--agent", "codex", "--by", "model"], foreign).totals).toEqual(report.totals);
    expect(fs.readdirSync(foreign)).toEqual(["theirs.json"]);
    const observed = path.join(process.env.REQWATCH_CACHE_DIR!, "observed");
    expect(fs.readdirSync(observed).some((folder) => fs.existsSync(path.join(observed, folder, "usage.db")))).toBe(true);
  });

  it("says where it looked when it finds no agent's files, rather than a table of zeros; a report by month names its months' zone", () => {
    const empty = tempParent();
    const none = runCli(["usage"], { env: { ...env, HOME: empty } });
    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe(
      `No session files found: looked for Claude Code (${path.join(empty, ".claude")}), Codex CLI (${path.join(empty, ".codex")}), Gemini CLI (${path.join(empty, ".gemini")}).`,
    );
    expect(runCli(["usage", "--by", "month", "--timezone", "UTC"], { env }).stdout).toContain("Months in UTC.");
  });

  it("refuses a bad value, naming its option, and changes nothing", () => {
    for (const [args, named] of [
      [["--by", "week"], "--by"],
      [["--since", "2026-13-01"], "--since"],
      [["--until", "yesterday"], "--until"],
      [["--timezone", "Mars/Olympus"], "--timezone"],
      [["--agent", "copilot"], "--agent"],
    ] as const) {
      const result = runCli(["usage", ...args], { env });
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toContain(named);
      expect(result.stdout).toBe("");
    }
    expect(fs.existsSync(path.join(home, "no-state-folder"))).toBe(false);
  });
});
