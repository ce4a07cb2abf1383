import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { aClaudeFolder } from "../helpers/claudeFolder";
import { installedCcusage } from "../helpers/clients";
import { aCodexFolder } from "../helpers/codexFolder";
import { aGeminiFolder } from "../helpers/geminiFolder";
import { aUsageHistory } from "../helpers/usageHistory";
import { expect, test } from "./fixtures";

// The Usage page on a home folder holding what the real Claude Code, Codex CLI and Gemini CLI wrote
// (tests/fixtures) and months of generated history: what a person sees, by day and by model, for one
// agent, and a call written while the page is open, each figure against the real ccusage's on the same files.

interface CcusageRow {
  period: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  modelBreakdowns: { modelName: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreationTokens: number }[];
}

const n = (value: number) => value.toLocaleString("en-US");

for (const width of [1280, 1400]) {
  test(`at ${width} px: the agents' usage by day and by model, one agent's, and a call written while the page is open, as ccusage counts them`, async ({
    page,
    launchApp,
  }) => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-e2e-usage-"));
    try {
      const now = Date.now();
      aClaudeFolder(path.join(home, ".claude"), ["plain", "tool", "resumed", "subagent"], now);
      ["plain", "tool", "resumed"].forEach((scenario, i) => aCodexFolder(path.join(home, ".codex"), [scenario], now - i * 60 * 60_000));
      aGeminiFolder(path.join(home, ".gemini"), ["plain", "tool", "resumed"], now);
      aUsageHistory(home, now);
      const env = { ...process.env, HOME: home, TZ: "UTC" } as NodeJS.ProcessEnv;
      for (const name of ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"]) delete env[name];
      const ccusage = (args: string[]) =>
        JSON.parse(execFileSync(installedCcusage(), [...args, "--json", "--offline", "--timezone", "UTC"], { env, encoding: "utf8" })) as {
          daily: CcusageRow[];
        };
      const { url } = await launchApp({
        TZ: "UTC",
        REQWATCH_AGENT_FILES: "on",
        REQWATCH_CLAUDE_DIR: path.join(home, ".claude"),
        REQWATCH_CODEX_DIR: path.join(home, ".codex"),
        REQWATCH_GEMINI_DIR: path.join(home, ".gemini"),
      });
      await page.setViewportSize({ width, height: 900 });

      await page.goto(url);
      await page.getByRole("navigation", { name: "Pages" }).getByRole("link", { name: "Usage" }).click();
      await expect(page.getByRole("heading", { level: 1, name: "Usage" })).toBeVisible();
      await expect(page.getByText("genai-prices 0.1.8, published 2026-09-23").first()).toBeVisible();

      // By day: each of ccusage's days, with its tokens.
      const byDay = page.getByRole("table", { name: "Usage by day" });
      const days = ccusage(["daily"]).daily;
      expect(days.length).toBeGreaterThan(20);
      for (const day of [days[0]!, days[Math.floor(days.length / 2)]!, days.at(-1)!]) {
        const cells = byDay
          .getByRole("row")
          .filter({ has: page.getByRole("rowheader", { name: day.period, exact: true }) })
          .getByRole("cell");
        // Agents, models, then input, output, cache read, cache write.
        for (const [i, value] of [day.inputTokens, day.outputTokens, day.cacheReadTokens, day.cacheCreationTokens].entries())
          await expect(cells.nth(2 + i)).toHaveText(n(value));
      }
      // The table fits the page: nothing to scroll sideways for.
      expect(await byDay.evaluate((table) => table.scrollWidth <= (table.parentElement?.clientWidth ?? 0) + 1)).toBe(true);

      // By model, for Codex CLI alone: its two models, each with ccusage's tokens.
      await page.getByLabel("Group by").selectOption("model");
      await page.getByLabel("Agent").selectOption({ label: "Codex CLI" });
      await page.getByRole("button", { name: "Show" }).click();
      const byModel = page.getByRole("table", { name: "Usage by model" });
      const codex = new Map<string, number>();
      for (const day of ccusage(["codex", "daily"]).daily as unknown as { models: Record<string, { inputTokens: number }> }[])
        for (const [model, sums] of Object.entries(day.models)) codex.set(model, (codex.get(model) ?? 0) + sums.inputTokens);
      // Its models' rows, and the total's.
      await expect(byModel.getByRole("rowheader")).toHaveCount(codex.size + 1);
      expect((await byModel.getByRole("rowheader").allTextContents()).sort()).toEqual([...codex.keys(), "Total"].sort());
      for (const [model, input] of codex)
        await expect(
          byModel
            .getByRole("row")
            .filter({ has: page.getByRole("rowheader", { name: model, exact: true }) })
            .getByRole("cell")
            .nth(2),
        ).toHaveText(n(input));

      // Back to every agent by day; a call written now shows in today's row without a reload.
      await page.getByLabel("Group by").selectOption("day");
      await page.getByLabel("Agent").selectOption({ label: "All agents" });
      await page.getByRole("button", { name: "Show" }).click();
      const today = page
        .getByRole("table", { name: "Usage by day" })
        .getByRole("row")
        .filter({ has: page.getByRole("rowheader", { name: days.at(-1)!.period, exact: true }) });
      await expect(today.getByRole("cell").nth(2)).toHaveText(n(days.at(-1)!.inputTokens));
      const file = path.join(home, ".claude", "projects", "-work-shop", "gen-session-1.jsonl");
      const call = {
        type: "assistant",
        sessionId: "gen-session-1",
        version: "2.1.332",
        timestamp: new Date().toISOString(),
        requestId: "req_written_now",
        message: { id: "msg_written_now", model: "claude-sonnet-4-5", role: "assistant", content: [], usage: { input_tokens: 1000, output_tokens: 10 } },
      };
      fs.appendFileSync(file, `${JSON.stringify(call)}\n`);
      const after = ccusage(["daily"]).daily.at(-1)!;
      expect(after.inputTokens).toBe(days.at(-1)!.inputTokens + 1000);
      await expect(today.getByRole("cell").nth(2)).toHaveText(n(after.inputTokens), { timeout: 15_000 });
      await expect(page.getByRole("table", { name: "Usage by day" }).getByRole("row").filter({ hasText: "Claude Code" }).first()).toBeVisible();
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
}
