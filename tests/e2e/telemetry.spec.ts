import fs from "node:fs";
import path from "node:path";
import { freePort } from "../helpers/processes";
import { expect, test } from "./fixtures";

// Claude Code's own exports (captured from the real CLI, tests/fixtures/otlp; the CLI itself runs
// against the receiver in tests/integration/claudeCode.test.ts) sent to the dashboard's receiver,
// and what a person sees of them.
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/claude-code-2.1.332");

async function send(receiver: string, scenario: string, only?: "logs" | "traces") {
  for (const file of fs.readdirSync(path.join(FIXTURES, scenario)).sort()) {
    const signal = /-(traces|logs|metrics)\./.exec(file)![1]!;
    if (only && signal !== only) continue;
    const raw = fs.readFileSync(path.join(FIXTURES, scenario, file));
    const protobuf = file.endsWith(".pb.gz");
    const response = await fetch(`${receiver}/v1/${signal}`, { method: "POST", body: raw, headers: { "content-type": protobuf ? "application/x-protobuf" : "application/json", ...(protobuf && { "content-encoding": "gzip" }) } });
    expect(response.status).toBe(200);
  }
}

test("Claude Code's turns beside the folder's requests: the table, live; a turn's page with what it did; a hung one stuck; the Health page's counts", async ({ page, launchApp }) => {
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort), REQWATCH_TELEMETRY_STUCK_AFTER: "2s" });

  // The overview names the source; the table is empty until something is sent.
  await page.goto(url);
  await expect(page.getByRole("table", { name: "Sources" }).getByRole("row", { name: /^otel / })).toContainText("OpenTelemetry");
  await page.goto(`${url}/requests?source=otel`);
  const table = page.getByRole("table", { name: "Requests" });
  await expect(page.getByTestId("source-line")).toContainText("last received never");

  // A turn that ran a tool arrives while the page is open, and shows without a reload.
  await send(receiver, "tool-protobuf");
  const row = table.getByRole("row").filter({ hasText: "claude-code" });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("completed");
  await expect(row).toContainText("2 model calls, 1 tool use, 240 in / 60 out tokens, $0.0016");
  await expect(row).toContainText("claude-sonnet-4-5");

  // Its own page: what it did, step by step, and its prompt and answer.
  await row.getByRole("link", { name: /^turn-\d+$/ }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
  const steps = page.getByRole("table", { name: "What it did" });
  await expect(steps.getByRole("row").filter({ hasText: "user_prompt" })).toContainText("a prompt of 11 characters");
  await expect(steps.getByRole("row").filter({ hasText: "tool_decision" })).toContainText("Bash, accept, by config");
  await expect(steps.getByRole("row").filter({ hasText: "turn ended" })).toHaveCount(1);
  await expect(page.getByText("what OpenTelemetry instrumentation sent reqwatch's receiver")).toBeVisible();
  await expect(page.locator("pre.text").first()).toHaveText("run echo hi");

  // A prompt whose API call never answered: processing, then stuck, with what it last did; the header counts it.
  await page.goto(`${url}/requests?source=otel`);
  await send(receiver, "interrupted", "logs");
  const hung = table.getByRole("row").filter({ hasText: "processing" });
  await expect(hung).toHaveCount(1);
  await expect(hung).toContainText(/nothing received for \d+s; last: user_prompt: a prompt of 9 characters/, { timeout: 15_000 });
  await expect(page.getByRole("link", { name: "otel: 1 stuck" })).toBeVisible({ timeout: 15_000 });

  // The Health page: where it listens, what came in, and what no mapping knows (counted, not dropped).
  await page.goto(`${url}/health`);
  const received = page.getByRole("definition").filter({ hasText: "OTLP/HTTP on" });
  await expect(received).toContainText(receiver);
  await expect(page.getByRole("table", { name: "Received, not shown as a lifecycle" }).getByRole("row").filter({ hasText: "plugin_loaded" })).toContainText("claude-code");
  // Tokens and cost: by day and model, and by session, the costliest first; a session opens its turns.
  const byModel = page.getByRole("table", { name: "Tokens and cost by day and model" }).getByRole("row").filter({ hasText: "claude-sonnet-4-5" });
  await expect(byModel).toHaveCount(1);
  await expect(byModel).toContainText("240");
  await expect(byModel).toContainText("$0.0016");
  await page.getByRole("table", { name: "Tokens and cost by day and model" }).screenshot({ path: test.info().outputPath("usage.png") });
  const sessions = page.getByRole("table", { name: "Tokens and cost by session" }).getByRole("row");
  await expect(sessions.nth(1)).toContainText("claude-code");
  await expect(sessions.nth(1)).toContainText("$0.0016");
  await sessions.nth(1).getByRole("link").click();
  await expect(page).toHaveURL(/\/requests\?.*source=otel/);
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row").filter({ hasText: "turn-" }).first()).toContainText("2 model calls, 1 tool use");
});
