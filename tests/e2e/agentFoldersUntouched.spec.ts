import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { aClaudeFolder } from "../helpers/claudeFolder";
import { aCodexFolder } from "../helpers/codexFolder";
import { aGeminiFolder } from "../helpers/geminiFolder";
import { treeSnapshot } from "../helpers/treeSnapshot";
import { expect, test } from "./fixtures";

// The agents' folders are only ever read: every byte, mode and modification time under Claude Code's,
// Codex CLI's and Gemini CLI's folders is the same after a minute of a person going through every
// page and an agent's every reading command (the real CLIs' files, tests/fixtures).

const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");
const A_MINUTE_MS = 60_000;

test("a minute of every page and command writes nothing under the agents' folders", async ({ page, launchApp, stateDir }) => {
  test.setTimeout(240_000);
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-e2e-untouched-"));
  try {
    const folders = {
      REQWATCH_CLAUDE_DIR: aClaudeFolder(path.join(parent, ".claude"), ["tool", "retry", "killed", "subagent"]).folder,
      REQWATCH_CODEX_DIR: aCodexFolder(path.join(parent, ".codex"), ["tool", "retried", "killed"]).folder,
      REQWATCH_GEMINI_DIR: aGeminiFolder(path.join(parent, ".gemini"), ["tool", "retry", "killed"]).folder,
    };
    const before = Object.values(folders).map(treeSnapshot);
    const env = { REQWATCH_AGENT_FILES: "on", ...folders };
    const { url } = await launchApp(env);
    // The dashboard's folder and cache folder (tests/e2e/fixtures.ts): the CLI reads the store it keeps.
    const cliEnv = { ...process.env, ...env, REQWATCH_STATE_DIR: stateDir, REQWATCH_CACHE_DIR: path.join(path.dirname(stateDir), "cache") };
    const cli = (...args: string[]) => {
      const run = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: cliEnv });
      expect(run.status, `reqwatch ${args.join(" ")}: ${run.stderr}`).toBe(0);
      return run.stdout;
    };

    const started = Date.now();
    let rounds = 0;
    while (rounds === 0 || Date.now() - started < A_MINUTE_MS) {
      rounds++;
      // Every page of the header, as a person goes through them.
      await page.goto(url);
      for (const name of ["Requests", "Sessions", "Usage", "Workers", "Audit", "Health", "Overview"]) {
        await page.getByRole("navigation", { name: "Pages" }).getByRole("link", { name, exact: true }).click();
        await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      }
      // The agents' turns, each turn's page and each session's.
      await page.goto(`${url}/requests?source=otel`);
      const turns = page.getByRole("table", { name: "Requests" }).getByRole("link", { name: /^(turn|agent)-\d+$/ });
      await expect(turns.first()).toBeVisible();
      for (const href of await turns.evaluateAll((links) => links.map((link) => link.getAttribute("href")!))) {
        await page.goto(`${url}${href}`);
        await expect(page.getByRole("list", { name: "Timeline" })).toBeVisible();
      }
      await page.goto(`${url}/sessions`);
      for (const href of await page.getByRole("link", { name: /^[0-9a-f]{8}/ }).evaluateAll((links) => links.map((link) => link.getAttribute("href")!))) {
        await page.goto(`${url}${href}`);
        await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      }
      // What an agent or a script runs: the same sources read by the CLI.
      expect(JSON.parse(cli("list", "--source", "otel", "--json")).items.length).toBeGreaterThan(0);
      for (const by of ["day", "month", "session", "project", "model"]) JSON.parse(cli("usage", "--by", by, "--json"));
    }
    console.log(`${rounds} rounds of every page and command in ${Math.round((Date.now() - started) / 1000)} s`);
    expect(Object.values(folders).map(treeSnapshot)).toEqual(before);
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
});
