import path from "node:path";
import { freePort } from "../helpers/processes";
import { recordedExports, sendExports } from "../helpers/recordedExports";
import { expect, test } from "./fixtures";

// Claude Code's own exports (captured from the real CLI, tests/fixtures/otlp; the CLI itself runs
// against the receiver in tests/integration/claudeCode.test.ts) sent to the dashboard's receiver,
// and what a person sees of them.
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/claude-code-2.1.332");

/** A scenario's exports, their times moved to now (as if Claude Code sent them this moment), to the receiver. */
async function send(receiver: string, scenario: string, only?: "logs" | "traces") {
  await sendExports(
    receiver,
    recordedExports(path.join(FIXTURES, scenario)).filter((item) => !only || item.signal === only),
  );
}

test("Claude Code's turns beside the folder's requests: the table, live; a turn's page with what it did; one that stopped, stuck; the Health page's counts", async ({
  page,
  launchApp,
}) => {
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
  // Received telemetry is never acted on: no selection, no Retry, not even a disabled one; the toolbar says why.
  await expect(page.getByRole("toolbar", { name: "Bulk actions" })).toContainText(
    "Received telemetry is shown as it was sent: nothing here is retried or deleted.",
  );
  await expect(table.getByRole("checkbox")).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^Retry/ })).toHaveCount(0);

  // Its own page: what it did on a timeline (each call and tool once, with what each record said of it), and its prompt and answer.
  await row.getByRole("link", { name: /^turn-\d+$/ }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
  const timeline = page.getByRole("list", { name: "Timeline" });
  await expect(timeline.getByRole("listitem", { name: /^user_prompt, instant/ })).toContainText("a prompt of 11 characters");
  await expect(timeline.getByRole("listitem", { name: /^tool, Bash, / })).toContainText("tool_decision: Bash, accept, by config");
  await expect(timeline.getByRole("listitem", { name: /^model call, claude-sonnet-4-5, / })).toHaveCount(2);
  await expect(timeline.getByRole("listitem", { name: /^turn ended, / })).toHaveCount(1);
  await expect(page.getByText("what OpenTelemetry instrumentation sent reqwatch's receiver")).toBeVisible();
  await expect(page.locator("pre.text").first()).toHaveText("run echo hi");

  // A prompt whose API call never answered: processing, then stuck, with what it last did; the header counts it.
  await page.goto(`${url}/requests?source=otel`);
  await send(receiver, "interrupted", "logs");
  const stopped = table.getByRole("row").filter({ hasText: "processing" });
  await expect(stopped).toHaveCount(1);
  await expect(stopped).toContainText(/nothing received for \d+s; last: user_prompt: a prompt of 9 characters/, { timeout: 15_000 });
  await expect(page.getByRole("link", { name: "otel: 1 stuck" })).toBeVisible({ timeout: 15_000 });

  // The Health page: where it listens, what came in, and what no mapping knows (counted, not dropped).
  await page.goto(`${url}/health`);
  const received = page.getByRole("definition").filter({ hasText: "OTLP/HTTP on" });
  await expect(received).toContainText(receiver);
  await expect(page.getByRole("table", { name: "Received, not shown as a lifecycle" }).getByRole("row").filter({ hasText: "plugin_loaded" })).toContainText(
    "claude-code",
  );
  // Tokens and cost: by day and model, and by session, the costliest first; a session opens its page, with its turns.
  const byModel = page.getByRole("table", { name: "Tokens and cost by day and model" }).getByRole("row").filter({ hasText: "claude-sonnet-4-5" });
  await expect(byModel).toHaveCount(1);
  await expect(byModel).toContainText("240");
  await expect(byModel).toContainText("$0.0016");
  await page.getByRole("table", { name: "Tokens and cost by day and model" }).screenshot({ path: test.info().outputPath("usage.png") });
  const sessions = page.getByRole("table", { name: "Tokens and cost by session" }).getByRole("row");
  await expect(sessions.nth(1)).toContainText("claude-code");
  await expect(sessions.nth(1)).toContainText("$0.0016");
  await sessions.nth(1).getByRole("link").click();
  await expect(page).toHaveURL(/\/sessions\/[^?]+\?source=otel$/);
  await expect(page.getByRole("table", { name: "Session requests" }).getByRole("row").filter({ hasText: "turn-" }).first()).toContainText(
    "2 model calls, 1 tool use",
  );
});

test("a Claude Code session on the Sessions page beside the folder's, live; its page with cost per model, tools and turns; a turn's own page", async ({
  page,
  launchApp,
  tracker,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const started = tracker.sessions.start();
  if (!started.ok) throw new Error(started.error.message);
  const folderSession = started.value.session.session_id;
  tracker.sessions.updateSnapshot({ activeTask: "Building authentication system" });
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort), REQWATCH_TELEMETRY_STUCK_AFTER: "2s" });

  await page.goto(`${url}/sessions`);
  const sessions = page.getByRole("table", { name: "Sessions" });
  await expect(sessions.getByRole("row", { name: new RegExp(folderSession) })).toContainText("this folder");

  // Claude Code exports a turn that ran a tool, and a prompt whose API call never answered: both sessions show without a reload.
  await send(receiver, "tool-protobuf");
  await send(receiver, "interrupted", "logs");
  const toolSession = sessions.getByRole("row").filter({ hasText: "$0.0016" });
  await expect(toolSession).toHaveCount(1);
  await expect(toolSession).toContainText("Claude Code");
  await expect(toolSession).toContainText("240 in / 60 out");
  await expect(toolSession.getByRole("cell")).toHaveText([
    /^[0-9a-f-]{36}$/,
    "Claude Code",
    "idle",
    /ago$/,
    "—",
    "1",
    "1 turn, 2 model calls, 1 tool use",
    "240 in / 60 out",
    "$0.0016",
    "0",
  ]);
  const stoppedSession = sessions.getByRole("row").filter({ hasText: "Claude Code" }).filter({ hasNotText: "$0.0016" });
  await expect(stoppedSession.getByRole("link", { name: "1 stuck" })).toBeVisible({ timeout: 15_000 });
  await page.screenshot({ path: test.info().outputPath("sessions.png") });

  // The session's own page: what it used, per model and tool, and its turns.
  const sessionId = (await toolSession.getByRole("link").first().textContent())!;
  await toolSession.getByRole("link", { name: sessionId }).click();
  await expect(page).toHaveURL(new RegExp(`/sessions/${sessionId}\\?source=otel$`));
  await expect(page.getByRole("heading", { level: 1 })).toContainText(sessionId);
  await expect(page.getByLabel("Received")).toContainText("Received over OpenTelemetry from Claude Code");
  const figures = page.getByRole("definition");
  await expect(figures.nth(0)).toHaveText("1");
  await expect(figures.nth(1)).toHaveText("2");
  await expect(figures.nth(3)).toHaveText("240 in / 60 out (cache read 0, cache write 0)");
  await expect(figures.nth(4)).toHaveText("$0.0016");
  await expect(
    page.getByRole("table", { name: "Cost and tokens by model" }).getByRole("row").filter({ hasText: "claude-sonnet-4-5" }).getByRole("cell"),
  ).toHaveText(["claude-sonnet-4-5", "2", "240", "60", "0", "0", "$0.0016"]);
  await expect(page.getByRole("table", { name: "Tools used" }).getByRole("row").filter({ hasText: "Bash" })).toContainText("1");
  await expect(page.getByRole("heading", { name: "Errors (0)" })).toBeVisible();
  await page.screenshot({ path: test.info().outputPath("session.png"), fullPage: true });

  // A turn leads to its lifecycle page, and back to its session.
  const turns = page.getByRole("table", { name: "Session requests" });
  await expect(turns.getByRole("row")).toHaveCount(2);
  await turns.getByRole("link", { name: /^turn-\d+$/ }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
  await expect(page.getByRole("list", { name: "Timeline" }).getByRole("listitem", { name: /^tool, Bash, / })).toContainText(
    "tool_decision: Bash, accept, by config",
  );
  await page.goBack();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(sessionId);

  // The requests table's session cell of a received turn leads to the same page.
  await page.goto(`${url}/requests?source=otel`);
  await page.getByRole("table", { name: "Requests" }).getByRole("link", { name: sessionId }).click();
  await expect(page).toHaveURL(new RegExp(`/sessions/${sessionId}\\?source=otel$`));
  await expect(page.getByRole("table", { name: "Cost and tokens by model" })).toBeVisible();
});

test("the overview's charts of the received turns: a person picks the otel source and sees the turns counted, with their tokens and cost, live", async ({
  page,
  launchApp,
}, testInfo) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort) });
  await send(receiver, "plain");

  await page.goto(url);
  const summary = page.getByLabel("Activity summary");
  // The folder's requests by default: none.
  await expect(summary).toContainText("Attempts ended in the last 1 hour, every workspace: 0 completed");
  const source = page.getByRole("group", { name: "Chart source" });
  await source.getByRole("button", { name: "Received (otel)" }).click();
  await expect(source.getByRole("button", { name: "Received (otel)" })).toHaveAttribute("aria-pressed", "true");
  await expect(summary).toContainText("Received over OpenTelemetry, ended in the last 1 hour, every workspace: 1 completed, 0 failed");
  await expect(summary).toContainText("120 in / 30 out tokens, $0.0008");
  for (const chart of [/^Lifecycles by state/, /^Tokens/, /^Cost/]) await expect(page.getByRole("figure", { name: chart })).toBeVisible();

  // A turn that retried through 529s arrives while the page is open: counted without a reload.
  await send(receiver, "retry");
  await expect(summary).toContainText("every workspace: 2 completed, 0 failed");
  await expect(summary).toContainText("240 in / 60 out tokens");
  await page.getByRole("region", { name: "Activity" }).screenshot({ path: testInfo.outputPath("received-charts.png") });

  // Back to the folder's: its own counts again.
  await source.getByRole("button", { name: "State folder" }).click();
  await expect(summary).toContainText("Attempts ended in the last 1 hour, every workspace: 0 completed");
});
