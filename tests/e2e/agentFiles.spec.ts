import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { aClaudeFolder } from "../helpers/claudeFolder";
import { CLIENTS, installedClient } from "../helpers/clients";
import { anOpenAiResponsesMock } from "../helpers/openAiResponsesMock";
import { freePort, waitForExit, withOutput } from "../helpers/processes";
import { writeCodexConfig } from "../helpers/codexConfig";
import { expect, test } from "./fixtures";

// Claude Code's own session files (captured from the real CLI with its telemetry off,
// tests/fixtures/claude-code-transcripts; the CLI itself runs in tests/integration/claudeCodeFiles.test.ts),
// in a Claude folder the dashboard reads, and what a person sees of them, live.

test("Claude Code's turns from its own files, with no telemetry: the table, a turn's timeline, a killed run stuck with its reason, a line appended shown without a reload, the Health page", async ({
  page,
  launchApp,
}) => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-e2e-claude-"));
  try {
    const { folder } = aClaudeFolder(path.join(parent, ".claude"), ["tool", "killed"]);
    // Gemini CLI's folder an empty one: a Gemini CLI of the machine's own is not read here.
    const { url } = await launchApp({ REQWATCH_AGENT_FILES: "on", REQWATCH_CLAUDE_DIR: folder, REQWATCH_GEMINI_DIR: path.join(parent, ".gemini") });

    await page.goto(`${url}/requests?source=otel`);
    const table = page.getByRole("table", { name: "Requests" });
    const tool = table.getByRole("row").filter({ hasText: "2 model calls" });
    await expect(tool).toContainText("completed");
    await expect(tool).toContainText("2 model calls, 1 tool use, 240 in / 60 out tokens");
    // The run killed mid-call: stuck at once, saying which process ended.
    const killed = table.getByRole("row").filter({ hasText: "processing" });
    await expect(killed).toContainText(/Claude Code \(pid 24624\) ended mid-turn \d+/);

    // A new prompt written while the page is open shows without a reload.
    const file = path.join(folder, "projects", "-e2e", "5b7c1e0a-0000-4000-8000-000000000001.jsonl");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const line = {
      parentUuid: null,
      isSidechain: false,
      promptId: "5b7c1e0a-0000-4000-8000-000000000002",
      type: "user",
      message: { role: "user", content: "written while the page is open" },
      uuid: "5b7c1e0a-0000-4000-8000-000000000003",
      timestamp: new Date().toISOString(),
      sessionId: "5b7c1e0a-0000-4000-8000-000000000001",
    };
    fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
    await expect(table.getByRole("row").filter({ hasText: "processing" })).toHaveCount(2);

    // The tool turn's page: each call and the tool once, on a timeline.
    await tool.getByRole("link", { name: /^turn-\d+$/ }).click();
    await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
    const timeline = page.getByRole("list", { name: "Timeline" });
    await expect(timeline.getByRole("listitem", { name: /^model call, claude-sonnet-4-5, / })).toHaveCount(2);
    await expect(timeline.getByRole("listitem", { name: /^tool, Bash, / })).toHaveCount(1);
    await expect(page.getByText("or an agent's own session files said")).toBeVisible();

    // The Health page: where the files are read from, and how much of them.
    await page.goto(`${url}/health`);
    await expect(page.getByRole("definition").filter({ hasText: `files in ${folder}` })).toContainText(/3 files in .*, \d+ lines read/);
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
});

test("a Codex CLI run with its telemetry on and its files read: one row for its turn, each call and the tool once on its timeline", async ({
  page,
  launchApp,
}) => {
  test.setTimeout(180_000);
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-e2e-join-"));
  const api = await anOpenAiResponsesMock("tool");
  try {
    const codexHome = path.join(parent, "codex");
    fs.mkdirSync(codexHome);
    const otlpPort = await freePort();
    const { url } = await launchApp({
      REQWATCH_OTLP_PORT: String(otlpPort),
      REQWATCH_AGENT_FILES: "on",
      REQWATCH_CODEX_DIR: codexHome,
      REQWATCH_CLAUDE_DIR: path.join(parent, ".claude"),
      REQWATCH_GEMINI_DIR: path.join(parent, ".gemini"),
    });
    // The real Codex CLI (tests/integration/agentJoin.test.ts runs the others), its [otel] section at the dashboard's receiver, its files in the folder the dashboard reads.
    writeCodexConfig(codexHome, api.url, { receiver: `http://127.0.0.1:${otlpPort}` });
    const home = path.join(parent, "home");
    fs.mkdirSync(home);
    const codex = withOutput(
      spawn(path.join(installedClient(CLIENTS.codexCli), "node_modules/.bin/codex"), ["exec", "--skip-git-repo-check", "run echo hi, seen by both"], {
        cwd: home,
        env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, MOCK_OPENAI_KEY: "test-key-for-the-mock", OTEL_BLRP_SCHEDULE_DELAY: "200" } as Record<
          string,
          string | undefined
        > as NodeJS.ProcessEnv,
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    expect(await waitForExit(codex), codex.output()).toBe(0);

    // Its turn's page, once both have told it: the file's end (task complete) and the telemetry's (its turn's span).
    await page.goto(`${url}/requests?source=otel`);
    const rows = page
      .getByRole("table", { name: "Requests" })
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: /^turn-\d+$/ }) });
    await expect(rows).toHaveCount(1);
    const turnPage = await rows.getByRole("link", { name: /^turn-\d+$/ }).getAttribute("href");
    await page.goto(`${url}${turnPage}`);
    const timeline = page.getByRole("list", { name: "Timeline" });
    await expect(async () => {
      await page.reload();
      await expect(timeline.getByRole("listitem", { name: /^turn ended/ })).toHaveCount(1, { timeout: 1000 });
      await expect(timeline.getByRole("listitem", { name: /^task complete/ })).toHaveCount(1, { timeout: 1000 });
    }).toPass({ timeout: 60_000 });
    await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
    await expect(timeline.getByRole("listitem", { name: /^model call, / })).toHaveCount(2);
    await expect(timeline.getByRole("listitem", { name: /^tool, exec_command, / })).toHaveCount(1);

    // Back in the table: still one row, its calls and tool counted once.
    await page.goto(`${url}/requests?source=otel`);
    await expect(rows).toHaveCount(1);
    await expect(rows).toContainText("completed");
    await expect(rows).toContainText("2 model calls, 1 tool use, 200 in / 60 out tokens");
  } finally {
    await api.close();
    fs.rmSync(parent, { recursive: true, force: true });
  }
});
