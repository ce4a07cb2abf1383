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
  await expect(page).toHaveURL(filter.search !== undefined ? /[?&]q=/ : /[?&]workspace=/);
  const rows = page.getByRole("table", { name: "Requests" }).getByRole("row").filter({ has: page.getByRole("link", { name: LIFECYCLE }) });
  await expect(rows).toHaveCount(count);
  return rows;
}

/** Opens the only row the filter leaves, once it is in `state`; the lifecycle's page is then open. */
async function openRow(page: Page, url: string, filter: { search?: string; workspace?: string }, state: string): Promise<{ cells: string[] }> {
  const rows = await findRows(page, url, filter, 1);
  const row = rows.first();
  await expect(row.getByRole("cell").nth(4)).toContainText(state);
  const cells = await row.getByRole("cell").allInnerTexts();
  await row.getByRole("link", { name: LIFECYCLE }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(state);
  return { cells };
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

  test("retried through two 503s then answered, given up after three, tools (one failed), a two-prompt session: the table, each turn's timeline and the session's page", async ({ page, launchApp }) => {
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
    await expect(mainCalls).toHaveCount(3);
    for (const [i, name] of [new RegExp(`, failed: ${OVERLOADED.replace(/\./g, "\\.")}`), new RegExp(`, failed: ${OVERLOADED.replace(/\./g, "\\.")}`), /^model call, gemini-3\.8-flash, \d+ ms$/].entries()) await expect(mainCalls.nth(i)).toHaveAccessibleName(name);
    await expect(timeline.getByText(OVERLOADED, { exact: true })).toHaveCount(2);
    await expect(page.getByRole("region", { name: "Timeline" })).not.toContainText(ZERO_COST);
    await readsInWords(page);
    await shoot(page, "gemini-retry");

    // 503 on every try: failed after three, with the API's error.
    await openRow(page, url, { search: "unavailable until it gives up" }, "failed");
    await expect(facts(page)).toContainText("Attempts3");
    await expect(facts(page)).toContainText(`Error${OVERLOADED}`);
    await expect(mainCalls).toHaveCount(3);
    await expect(timeline.getByRole("listitem", { name: new RegExp(`^model call, gemini-3\\.8-flash, \\d+ ms, failed: ${OVERLOADED.replace(/\./g, "\\.")}`) })).toHaveCount(3);
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
    await expect(byModel.getByRole("row").filter({ hasText: "gemini-3.8-flash" }).getByRole("cell")).toHaveText(["gemini-3.8-flash", "2", "200", "60", "40", "0", /^\$0\.0004 estimated$/]);
    await expect(byModel.getByRole("row").filter({ hasText: "gemini-3.5-flash-lite" }).getByRole("cell")).toHaveText(["gemini-3.5-flash-lite", "1", "50", "10", "0", "0", /^\$0\.0000 estimated$/]);
    await expect(page.getByRole("table", { name: "Tools used" }).getByRole("row").filter({ hasText: "read_file" }).getByRole("cell")).toHaveText(["read_file", "2", "1", /ms$/]);

    // Two prompts in one session (the second run resuming it): two turns, one session, its page with both.
    const sessionRows = await findRows(page, url, { search: "prompt of the session" }, 2);
    const sessionId = (await sessionRows.first().getByRole("link", { name: /^[0-9a-f-]{36}$/ }).textContent())!;
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
