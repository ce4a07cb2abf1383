import fs from "node:fs";
import path from "node:path";
import type { Locator, Page } from "@playwright/test";
import { freePort } from "../helpers/processes";
import { recordedExports, sendExports } from "../helpers/recordedExports";
import { expect, test } from "./fixtures";

// Each client's own exports (captured from the real client, tests/fixtures/otlp/<client>/<scenario>),
// moved to now and sent to a dashboard's receiver; then what a person does: the otel source's table,
// a lifecycle's page and what its timeline says in words, a session's page. Screenshots of each
// timeline go to REQWATCH_SHOTS (outside the repository) when it is set, else to the test's output.
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp");
const LIFECYCLE = /^(turn|agent|call|message)-\d+$/;
/** A cost shown as $0 (not $0.0002): a call's price is known, estimated or unknown, never nothing. */
const ZERO_COST = /\$0(?![.\d])/;

async function aReceivingDashboard(launchApp: (env?: Record<string, string>) => Promise<{ url: string }>) {
  const otlpPort = await freePort();
  const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort) });
  const send = async (client: string, ...scenarios: string[]) => {
    for (const scenario of scenarios) await sendExports(`http://127.0.0.1:${otlpPort}`, recordedExports(path.join(FIXTURES, client, scenario)));
  };
  return { url, send };
}

/** The otel source's rows as a person narrows them (words in the Search box: a prompt, an error; or a workspace), once there are `count`. */
async function findRows(page: Page, url: string, filter: { search?: string; workspace?: string }, count: number): Promise<Locator> {
  await page.goto(`${url}/requests?source=otel`);
  if (filter.search !== undefined) await page.getByRole("searchbox", { name: "Search" }).fill(filter.search);
  if (filter.workspace !== undefined) await page.getByRole("textbox", { name: "Workspace" }).fill(filter.workspace);
  // The filter applies as the person types: the table is the filtered one once the address says it.
  await expect(page).toHaveURL(filter.search !== undefined ? /[?&]q=/ : /[?&]workspace(Prefix)?=/);
  const rows = page
    .getByRole("table", { name: "Requests" })
    .getByRole("row")
    .filter({ has: page.getByRole("link", { name: LIFECYCLE }) });
  await expect(rows).toHaveCount(count);
  return rows;
}

/** The received lifecycles' table has no selection column (nothing there is acted on): request, workspace, session, state... */
const SESSION = 2;
const STATE = 3;

/** Opens the only row the filter leaves, once it is in `state`; the lifecycle's page is then open. */
async function openRow(page: Page, url: string, filter: { search?: string; workspace?: string }, state: string): Promise<{ cells: string[] }> {
  const rows = await findRows(page, url, filter, 1);
  const row = rows.first();
  await expect(row.getByRole("cell").nth(STATE)).toContainText(state);
  const cells = await row.getByRole("cell").allInnerTexts();
  await row.getByRole("link", { name: LIFECYCLE }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(state);
  return { cells };
}

/** Sends one scenario and opens the lifecycle it made: the newest row, once the table has `rows`. */
async function sendAndOpen(
  page: Page,
  dashboard: { url: string; send: (client: string, ...scenarios: string[]) => Promise<void> },
  client: string,
  scenario: string,
  rows: number,
  state: string,
): Promise<void> {
  await dashboard.send(client, scenario);
  await page.goto(`${dashboard.url}/requests?source=otel`);
  const listed = page
    .getByRole("table", { name: "Requests" })
    .getByRole("row")
    .filter({ has: page.getByRole("link", { name: LIFECYCLE }) });
  await expect(listed).toHaveCount(rows);
  await expect(listed.first().getByRole("cell").nth(STATE)).toContainText(state);
  await listed.first().getByRole("link", { name: LIFECYCLE }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(state);
}

/** A fact of the lifecycle's page, as its term and definition read together (`Attempts3`). */
const facts = (page: Page) => page.getByLabel("Lifecycle", { exact: true });

async function shoot(page: Page, name: string): Promise<void> {
  const folder = process.env.REQWATCH_SHOTS ?? test.info().outputPath();
  fs.mkdirSync(folder, { recursive: true });
  await page.screenshot({ path: path.join(folder, `${name}.png`), fullPage: true });
}

/** What no page of a lifecycle says: a null, an undefined, a raw epoch time, a cost of nothing. */
async function readsInWords(page: Page): Promise<void> {
  for (const absent of [/null/i, /undefined/, /\bNaN\b/, /\b1\d{12}\b/]) await expect(page.getByRole("main")).not.toContainText(absent);
}

test.describe("Gemini CLI 0.61.0", () => {
  const CLIENT = "gemini-cli-0.61.0";
  const OVERLOADED = "503 UNAVAILABLE: The model is overloaded. Please try again later.";

  test("retried through two 503s then answered, given up after three, tools (one failed), a two-prompt session: the table, each turn's timeline and the session's page", async ({
    page,
    launchApp,
  }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const { url, send } = await aReceivingDashboard(launchApp);
    await send(CLIENT, "retry", "exhausted", "tool", "session");
    const timeline = page.getByRole("list", { name: "Timeline" });
    const mainCalls = timeline.getByRole("listitem", { name: /^model call, gemini-3\.8-flash, / });
    const router = timeline.getByRole("listitem", { name: /^model call, gemini-3\.5-flash-lite, router, \d+ ms$/ });

    // Two 503s, then an answer: completed on its third attempt, each failure with the API's words, the router's call marked.
    await openRow(page, url, { search: "answer after two 503s" }, "completed");
    await expect(facts(page)).toContainText("Attempts3");
    await expect(facts(page)).toContainText("Tokens150 in / 40 out (cache read 20, cache write 0)");
    await expect(facts(page)).toContainText("Cost$0.0002 estimated");
    await expect(router).toHaveCount(1);
    await expect(router.getByText("router", { exact: true })).toBeVisible();
    // One call of the main model, tried three times: each bar says which try it was.
    await expect(facts(page)).toContainText("Model calls2");
    await expect(mainCalls).toHaveCount(3);
    for (const [i, name] of [
      new RegExp(`, attempt 1 of 3, failed: ${OVERLOADED.replace(/\./g, "\\.")}`),
      new RegExp(`, attempt 2 of 3, failed: ${OVERLOADED.replace(/\./g, "\\.")}`),
      /^model call, gemini-3\.8-flash, \d+ ms, attempt 3 of 3$/,
    ].entries())
      await expect(mainCalls.nth(i)).toHaveAccessibleName(name);
    await expect(timeline.getByText(OVERLOADED, { exact: true })).toHaveCount(2);
    await expect(page.getByRole("region", { name: "Timeline" })).not.toContainText(ZERO_COST);
    await readsInWords(page);
    await shoot(page, "gemini-retry");

    // 503 on every try: failed after three, with the API's error.
    await openRow(page, url, { search: "unavailable until it gives up" }, "failed");
    await expect(facts(page)).toContainText("Attempts3");
    await expect(facts(page)).toContainText(`Error${OVERLOADED}`);
    await expect(mainCalls).toHaveCount(3);
    await expect(
      timeline.getByRole("listitem", {
        name: new RegExp(`^model call, gemini-3\\.8-flash, \\d+ ms, attempt \\d of 3, failed: ${OVERLOADED.replace(/\./g, "\\.")}`),
      }),
    ).toHaveCount(3);
    await readsInWords(page);
    await shoot(page, "gemini-exhausted");

    // Two tools: the file it read, and the one that was not there, failed with its error.
    await openRow(page, url, { search: "read note.txt and missing.txt" }, "completed");
    await expect(timeline.getByRole("listitem", { name: /^tool, read_file, \d+ ms$/ })).toHaveCount(1);
    const missing = timeline.getByRole("listitem", { name: /^tool, read_file, \d+ ms, failed: File not found: .*missing\.txt$/ });
    await expect(missing).toHaveCount(1);
    await expect(missing.getByText(/^File not found: .*missing\.txt$/).first()).toBeVisible();
    await expect(facts(page)).toContainText("Cost$0.0004 estimated");
    await readsInWords(page);
    await shoot(page, "gemini-tool");
    // Its session's page: each model's calls under that model (the router's too), the tools.
    const toolRow = (await findRows(page, url, { search: "read note.txt and missing.txt" }, 1)).first();
    await toolRow.getByRole("link", { name: /^[0-9a-f-]{36}$/ }).click();
    await expect(page.getByLabel("Received")).toContainText("Received over OpenTelemetry from Gemini CLI");
    const byModel = page.getByRole("table", { name: "Cost and tokens by model" });
    await expect(byModel.getByRole("row").filter({ hasText: "gemini-3.8-flash" }).getByRole("cell")).toHaveText([
      "gemini-3.8-flash",
      "2",
      "200",
      "60",
      "40",
      "0",
      /^\$0\.0004 estimated$/,
    ]);
    await expect(byModel.getByRole("row").filter({ hasText: "gemini-3.5-flash-lite" }).getByRole("cell")).toHaveText([
      "gemini-3.5-flash-lite",
      "1",
      "50",
      "10",
      "0",
      "0",
      /^\$0\.0000 estimated$/,
    ]);
    await expect(page.getByRole("table", { name: "Tools used" }).getByRole("row").filter({ hasText: "read_file" }).getByRole("cell")).toHaveText([
      "read_file",
      "2",
      "1",
      /ms$/,
    ]);

    // Two prompts in one session (the second run resuming it): two turns, one session, its page with both.
    const sessionRows = await findRows(page, url, { search: "prompt of the session" }, 2);
    const sessionId = (await sessionRows
      .first()
      .getByRole("link", { name: /^[0-9a-f-]{36}$/ })
      .textContent())!;
    await expect(sessionRows.nth(1).getByRole("link", { name: sessionId })).toBeVisible();
    await sessionRows.first().getByRole("link", { name: sessionId }).click();
    await expect(page.getByRole("heading", { level: 1 })).toContainText(sessionId);
    const figures = page.getByRole("definition");
    await expect(figures.nth(0)).toHaveText("2");
    await expect(figures.nth(1)).toHaveText("4");
    await expect(page.getByRole("table", { name: "Session requests" }).getByRole("link", { name: LIFECYCLE })).toHaveCount(2);
    await expect(page.getByRole("heading", { name: "Errors (0)" })).toBeVisible();
    await readsInWords(page);
    await shoot(page, "gemini-session");
  });
});

test.describe("Codex CLI 0.171.0", () => {
  const CLIENT = "codex-0.171.0";

  test("500, 500, then an answer; 500 until it gave up; a tool; a resumed session: the table, each turn's timeline and the session's page", async ({
    page,
    launchApp,
  }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const { url, send } = await aReceivingDashboard(launchApp);
    await send(CLIENT, "retry", "exhausted-spans-sent", "tool", "resumed");
    const timeline = page.getByRole("list", { name: "Timeline" });
    // Codex sends no cost, and (until its calls say their model) nothing to price them by: estimated or unknown, never $0.
    const cost = /Cost(unknown|\$0\.\d*[1-9]\d* estimated)/;

    // Two 500s, then the answer: completed on the third attempt, the failures told with their status.
    await openRow(page, url, { search: "answer after two errors" }, "completed");
    await expect(facts(page)).toContainText("Attempts3");
    await expect(facts(page)).toContainText("Tokens100 in / 30 out (cache read 20, cache write 0)");
    await expect(facts(page)).toContainText(cost);
    await expect(facts(page)).not.toContainText("Error");
    // One call, its two refused HTTP attempts and its answer drawn as one bar; opened, what each told of it, the 500s too.
    const call = timeline.getByRole("listitem", { name: /^model call, gpt-5-codex, \d+ ms, 3 attempts$/ });
    await expect(call).toHaveCount(1);
    await call.getByText("model call", { exact: true }).first().click();
    await expect(call.getByRole("list", { name: "Told by" }).getByRole("listitem").filter({ hasText: "500, http 500" })).toHaveCount(2);
    await expect(page.getByRole("main")).not.toContainText(ZERO_COST);
    await readsInWords(page);
    await shoot(page, "codex-retry");

    // 500 every time: failed, with the status it gave up on.
    await openRow(page, url, { search: "fail until it gives up" }, "failed");
    await expect(facts(page)).toContainText(/Error.*500/);
    await expect(timeline.getByRole("listitem", { name: /failed: 500, http 500/ }).first()).toBeVisible();
    await readsInWords(page);
    await shoot(page, "codex-exhausted");

    // Its shell tool, once.
    await openRow(page, url, { search: "run echo hi" }, "completed");
    await expect(timeline.getByRole("listitem", { name: /^tool, exec_command, \d+ ms/ })).toHaveCount(1);
    await expect(facts(page)).toContainText("Tool uses1");
    await readsInWords(page);
    await shoot(page, "codex-tool");

    // `codex exec resume --last`: the second prompt is a turn of the same conversation.
    const resumed = await findRows(page, url, { search: "prompt" }, 2);
    const sessionId = (await resumed.first().getByRole("cell").nth(SESSION).textContent())!;
    await expect(resumed.nth(1).getByRole("cell").nth(SESSION)).toHaveText(sessionId);
    await resumed.first().getByRole("link", { name: sessionId }).click();
    await expect(page.getByRole("heading", { level: 1 })).toContainText(sessionId);
    await expect(page.getByLabel("Received")).toContainText("Received over OpenTelemetry from Codex CLI:");
    await expect(page.getByRole("definition").first()).toHaveText("2");
    await expect(page.getByRole("table", { name: "Session requests" }).getByRole("link", { name: LIFECYCLE })).toHaveCount(2);
    await readsInWords(page);
    await shoot(page, "codex-session");
  });
});

test.describe("the AI SDK", () => {
  for (const { client, service, attemptsSpans } of [
    { client: "ai-sdk-6.0.325", service: "ai-sdk-6", attemptsSpans: true },
    // AI SDK 7's spans (its legacy ones as its GenAI ones) tell of a call, not of its tries: a retry that then answered leaves no trace.
    { client: "ai-sdk-7.0.173-legacy", service: "ai-sdk-7-legacy", attemptsSpans: false },
    { client: "ai-sdk-7.0.173-otel", service: "ai-sdk-7", attemptsSpans: false },
  ]) {
    test(`${client}: an answer, a tool, 529 twice then an answer, 529 until it gave up, a stream aborted: each agent run's page`, async ({
      page,
      launchApp,
    }) => {
      await page.setViewportSize({ width: 1280, height: 900 });
      const dashboard = await aReceivingDashboard(launchApp);
      const timeline = page.getByRole("list", { name: "Timeline" });
      const calls = timeline.getByRole("listitem", { name: /^model call, claude-sonnet-4-5, / });

      await sendAndOpen(page, dashboard, client, "plain", 1, "completed");
      await expect(facts(page)).toContainText(`Service${service}`);
      await expect(facts(page)).toContainText("Tokens120 in / 30 out (cache read 0, cache write 0)");
      await expect(facts(page)).toContainText("Cost$0.0008 estimated");
      await expect(calls).toHaveCount(1);

      await sendAndOpen(page, dashboard, client, "tool", 2, "completed");
      await expect(calls).toHaveCount(2);
      await expect(timeline.getByRole("listitem", { name: /^tool, Bash, \d+ ms$/ })).toHaveCount(1);
      await expect(facts(page)).toContainText("Cost$0.0016 estimated");
      await readsInWords(page);
      await shoot(page, `${client}-tool`);

      await sendAndOpen(page, dashboard, client, "retried", 3, "completed");
      await expect(facts(page)).toContainText("Cost$0.0008 estimated");
      await expect(facts(page)).not.toContainText("Error");
      if (attemptsSpans) {
        await expect(facts(page)).toContainText("Attempts3");
        // Each try its own span: two failed with the API's words, then the answer, each bar saying which try it was.
        await expect(calls).toHaveCount(3);
        for (const [i, name] of [
          /, attempt 1 of 3, failed: AI_APICallError: Overloaded/,
          /, attempt 2 of 3, failed: AI_APICallError: Overloaded/,
          /^model call, claude-sonnet-4-5, \d+ ms, attempt 3 of 3$/,
        ].entries())
          await expect(calls.nth(i)).toHaveAccessibleName(name);
        await expect(calls.nth(1).getByText("attempt 2 of 3", { exact: true })).toBeVisible();
      } else await expect(calls).toHaveCount(1);
      await expect(page.getByRole("region", { name: "Timeline" })).not.toContainText(ZERO_COST);
      await readsInWords(page);
      await shoot(page, `${client}-retried`);

      await sendAndOpen(page, dashboard, client, "exhausted", 4, "failed");
      await expect(facts(page)).toContainText("Attempts3");
      await expect(facts(page)).toContainText(/ErrorA?.*AI_RetryError: Failed after 3 attempts\. Last error: (AI_APICallError: )?Overloaded/);
      await expect(timeline.getByText(/AI_RetryError: Failed after 3 attempts/).first()).toBeVisible();
      await expect(page.getByRole("region", { name: "Timeline" })).not.toContainText(ZERO_COST);
      await readsInWords(page);
      await shoot(page, `${client}-exhausted`);

      // Aborted mid-stream: failed, saying so (its words are the mapping's: the SDK says only that the stream ended).
      await sendAndOpen(page, dashboard, client, "aborted", 5, "failed");
      await expect(facts(page)).toContainText(/Error.*abort/i);
      await expect(timeline.getByRole("listitem", { name: /failed: .*abort/i }).first()).toBeVisible();
      await readsInWords(page);
      await shoot(page, `${client}-aborted`);
    });
  }
});

test.describe("OpenInference, Traceloop and Mastra", () => {
  for (const { client, service, kind, error } of [
    { client: "openinference-anthropic-0.2.8", service: "oi-app", kind: "call", error: /OverloadedError: 529 .*Overloaded/ },
    { client: "traceloop-0.27.0", service: "tl-app", kind: "call", error: /Error: 529 .*Overloaded/ },
    { client: "mastra-1.71.0", service: "ma-app", kind: "agent", error: /Error: Overloaded/ },
  ]) {
    test(`${client}: an answer, an agent that ran a tool, a call the API refused: each page, each call once`, async ({ page, launchApp }) => {
      await page.setViewportSize({ width: 1280, height: 900 });
      const dashboard = await aReceivingDashboard(launchApp);
      const timeline = page.getByRole("list", { name: "Timeline" });
      const calls = timeline.getByRole("listitem", { name: /^model call, claude-sonnet-4-5, / });

      await sendAndOpen(page, dashboard, client, "plain", 1, "completed");
      await expect(facts(page)).toContainText(`Service${service}`);
      await expect(facts(page)).toContainText("Model calls1");
      await expect(facts(page)).toContainText("Cost$0.0008 estimated");
      // One call, one bar, however many instrumentations told of it.
      await expect(calls).toHaveCount(1);
      await readsInWords(page);
      await shoot(page, `${client}-plain`);

      await sendAndOpen(page, dashboard, client, "tool", 2, "completed");
      await expect(facts(page)).toContainText("Kindagent");
      await expect(facts(page)).toContainText("Model calls2");
      await expect(facts(page)).toContainText("Tool uses1");
      await expect(facts(page)).toContainText("Tokens240 in / 60 out (cache read 0, cache write 0)");
      await expect(facts(page)).toContainText("Cost$0.0016 estimated");
      await expect(calls).toHaveCount(2);
      await expect(timeline.getByRole("listitem", { name: /^tool, Bash, \d+ ms$/ })).toHaveCount(1);
      await readsInWords(page);
      await shoot(page, `${client}-tool`);

      await sendAndOpen(page, dashboard, client, "error", 3, "failed");
      await expect(facts(page)).toContainText(`Kind${kind}`);
      await expect(facts(page)).toContainText(new RegExp(`Error${error.source}`));
      await expect(calls).toHaveCount(1);
      await expect(calls.first()).toHaveAccessibleName(/, failed: /);
      await expect(page.getByRole("region", { name: "Timeline" })).not.toContainText(ZERO_COST);
      await readsInWords(page);
      await shoot(page, `${client}-error`);
    });
  }
});

test.describe("BullMQ 6.7.0 with bullmq-otel", () => {
  const CLIENT = "bullmq-6.7.0";

  test("a job retried twice then done, one failed for good, one whose worker died (stuck, then found stalled and done): the requests page, each job's page, the queues on the overview", async ({
    page,
    launchApp,
  }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const otlpPort = await freePort();
    const receiver = `http://127.0.0.1:${otlpPort}`;
    // A job with nothing new for 2 s is stuck here (10 minutes by default).
    const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort), REQWATCH_TELEMETRY_STUCK_AFTER: "2s" });
    for (const scenario of ["retry", "failed"]) await sendExports(receiver, recordedExports(path.join(FIXTURES, CLIENT, scenario)));
    const timeline = page.getByRole("list", { name: "Timeline" });

    // `charge` threw on its first two attempts: completed on the third, each failure's reason in its attempt.
    await openRow(page, url, { workspace: "retry" }, "completed");
    await expect(facts(page)).toContainText("Kindmessage");
    await expect(facts(page)).toContainText("Attempts3");
    await expect(facts(page)).not.toContainText("Error");
    const attempts = timeline.getByRole("listitem", { name: /^process \(attempt \d\)/ });
    await expect(attempts).toHaveCount(3);
    for (const [i, name] of [
      /^process \(attempt 1\), \d+ ms, failed: charge refused on attempt 1$/,
      /^process \(attempt 2\), \d+ ms, failed: charge refused on attempt 2$/,
      /^process \(attempt 3\), \d+ ms$/,
    ].entries())
      await expect(attempts.nth(i)).toHaveAccessibleName(name);
    await expect(timeline.getByRole("listitem", { name: /^retry later, / })).toHaveCount(2);
    await expect(page.getByRole("main")).toContainText('{"done":"charge"}');
    await readsInWords(page);
    await shoot(page, "bullmq-retry");

    // `render` threw on both its attempts: failed for good with the last reason.
    await openRow(page, url, { workspace: "failed" }, "failed");
    await expect(facts(page)).toContainText("Attempts2");
    await expect(facts(page)).toContainText("Errorrender refused on attempt 2");
    await expect(timeline.getByRole("listitem", { name: /^process \(attempt \d\), \d+ ms, failed: render refused on attempt \d$/ })).toHaveCount(2);
    await readsInWords(page);
    await shoot(page, "bullmq-failed");

    // `archive`: its worker took it and died (the exports it sent before it was killed).
    const stalled = recordedExports(path.join(FIXTURES, CLIENT, "stalled"));
    await sendExports(receiver, stalled.slice(0, 2));
    const rows = await findRows(page, url, { workspace: "stalled" }, 1);
    await expect(rows.first().getByRole("cell").nth(STATE)).toContainText(/stuck: nothing received for \d+s; last: /, { timeout: 15_000 });
    await page.goto(url);
    const sources = page.getByRole("table", { name: "Sources" });
    await expect(
      sources
        .getByRole("row")
        .filter({ has: page.getByRole("link", { name: "otel" }) })
        .getByRole("cell")
        .nth(5),
    ).toHaveText("1 stuck");
    await shoot(page, "bullmq-queues-stuck");
    // Another worker finds it stalled, puts it back and completes it: done, no longer stuck, the stall on its page.
    await sendExports(receiver, stalled.slice(2));
    await expect(
      sources
        .getByRole("row")
        .filter({ has: page.getByRole("link", { name: "otel" }) })
        .getByRole("cell")
        .nth(5),
    ).toHaveText("0", { timeout: 15_000 });
    await openRow(page, url, { workspace: "stalled" }, "completed");
    await expect(timeline.getByRole("listitem", { name: /^stalled, / })).toHaveCount(1);
    await expect(timeline.getByRole("listitem", { name: /^process \(attempt 1\), \d+ ms$/ })).toHaveCount(1);
    await expect(page.getByRole("main")).toContainText('{"done":"archive"}');
    await readsInWords(page);
    await shoot(page, "bullmq-stalled");
  });
});
