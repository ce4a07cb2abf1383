import path from "node:path";
import type { Locator } from "@playwright/test";
import { freePort } from "../helpers/processes";
import { recordedExports, sendExports, type RecordedExport } from "../helpers/recordedExports";
import { expect, test } from "./fixtures";

// A received turn's page as a trace viewer draws it, from Claude Code's own exports (captured from
// the real CLI, tests/fixtures/otlp) moved to now; and the Health page's list of what no mapping knows.
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/claude-code-2.1.332");

async function send(receiver: string, scenario: string) {
  await sendExports(receiver, recordedExports(path.join(FIXTURES, scenario)));
}

/** A bar's drawn width in pixels: the item's own bar, the first in it (its children's come after). */
async function barWidth(item: Locator): Promise<number> {
  return (await item.getByRole("img").first().boundingBox())!.width;
}

test("a received turn's page draws it as a timeline: each model call and the tool once, nested in the turn, the slowest marked, bars as wide as they took; its facts in words", async ({
  page,
  launchApp,
}) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort) });
  const exports = recordedExports(path.join(FIXTURES, "tool"));
  // Its log events first: the turn as they tell it, flat (they say nothing of what ran inside what).
  await sendExports(
    receiver,
    exports.filter((item) => item.signal === "logs"),
  );

  await page.goto(`${url}/requests?source=otel`);
  await page
    .getByRole("table", { name: "Requests" })
    .getByRole("link", { name: /^turn-\d+$/ })
    .click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
  const timeline = page.getByRole("list", { name: "Timeline" });
  const calls = timeline.getByRole("listitem", { name: /^model call, claude-sonnet-4-5, \d+ ms/ });
  await expect(calls).toHaveCount(2);
  const turn = timeline.getByRole("listitem", { name: /^turn ended, 352 ms$/ });
  await expect(turn).toHaveCount(0);

  // Then its spans, while the page is open: the same calls and tool, now nested in the turn, each still once.
  await sendExports(
    receiver,
    exports.filter((item) => item.signal === "traces"),
  );
  await expect(turn).toHaveCount(1, { timeout: 15_000 });
  // Claude Code tells of each call twice (its api_request event, its llm_request span) and of the tool three times: each is one bar.
  await expect(calls).toHaveCount(2);
  const tool = timeline.getByRole("listitem", { name: /^tool, Bash, \d+ ms/ });
  await expect(tool).toHaveCount(1);
  // Nested: the calls, the tool and the prompt inside the turn; the wait for permission and the run inside the tool.
  await expect(turn.getByRole("listitem", { name: /^model call/ })).toHaveCount(2);
  await expect(turn.getByRole("listitem", { name: /^user_prompt, instant/ })).toHaveCount(1);
  await expect(tool.getByRole("listitem")).toHaveText([/waited for permission/, /tool ran/]);
  // The slowest call or tool is marked, and only it.
  await expect(timeline.getByRole("listitem", { name: /the slowest$/ })).toHaveCount(1);
  await expect(calls.first()).toHaveAccessibleName("model call, claude-sonnet-4-5, 95 ms, the slowest");
  await expect(calls.first()).toContainText("slowest");
  // Bars as wide as what they took: the turn (352 ms) and its first call (95 ms).
  const ratio = (await barWidth(turn)) / (await barWidth(calls.first()));
  expect(ratio).toBeGreaterThan(352 / 95 - 0.3);
  expect(ratio).toBeLessThan(352 / 95 + 0.3);
  // What each record said of the call, merged into one, on opening it.
  await calls.first().getByText("model call", { exact: true }).first().click();
  await expect(calls.first().getByText("120 in / 30 out tokens, $0.0008, first token 41 ms")).toBeVisible();
  await expect(calls.first().getByRole("list", { name: "Told by" }).getByRole("listitem")).toHaveText([
    /^model call: claude-sonnet-4-5, 120 in \/ 30 out, 95 ms/,
    /^api_request: claude-sonnet-4-5, 120 in \/ 30 out, \$0\.0008/,
  ]);
  await page.getByRole("region", { name: "Timeline" }).screenshot({ path: test.info().outputPath("timeline.png") });

  // The turn in words: times as times, durations as durations, nothing it does not know.
  const facts = page.getByLabel("Lifecycle", { exact: true });
  await expect(facts).toContainText("Took352 ms");
  await expect(facts).toContainText("Tokens240 in / 60 out (cache read 0, cache write 0)");
  // A time as every date on every page: how long ago, the exact time on hover.
  await expect(facts.getByText(/^\d+(ms|s|m|h|d)( \d+(ms|s|m|h|d))? ago$/).first()).toHaveAttribute("title", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  for (const absent of [/null/i, /undefined/, /\b1\d{12}\b/]) await expect(page.getByRole("main")).not.toContainText(absent);
  await expect(page.getByRole("table", { name: "As stored" })).toHaveCount(0);
  await page.screenshot({ path: test.info().outputPath("turn.png"), fullPage: true });
});

test("a call that gave up after 11 attempts is red on the turn's timeline with its error, and the give-up is marked where it happened", async ({
  page,
  launchApp,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort) });
  await send(receiver, "retry");
  await send(receiver, "exhausted");

  await page.goto(`${url}/requests?source=otel`);
  await page
    .getByRole("table", { name: "Requests" })
    .getByRole("row")
    .filter({ hasText: "failed" })
    .getByRole("link", { name: /^turn-\d+$/ })
    .click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("failed");
  const timeline = page.getByRole("list", { name: "Timeline" });
  const call = timeline.getByRole("listitem", { name: "model call, claude-sonnet-4-5, 3m 5s, 11 attempts, failed: 529, Overloaded" });
  await expect(call).toHaveCount(1);
  await expect(call.getByText("529, Overloaded", { exact: true }).first()).toBeVisible();
  // Its attempts inside it, each failed.
  await expect(call.getByRole("listitem", { name: /^attempt \d+, .*, failed/ })).toHaveCount(11);
  await expect(call.getByText("11 attempts", { exact: true }).first()).toBeVisible();
  await expect(call.getByRole("img").first()).toHaveCSS("background-color", "rgb(229, 72, 77)");
  const gaveUp = timeline.getByRole("listitem", { name: /^api_retries_exhausted, instant, failed: 529, Overloaded after 11 attempts$/ });
  await expect(gaveUp).toBeVisible();
  await expect(gaveUp.getByRole("img")).toHaveCSS("background-color", "rgb(229, 72, 77)");
  await page.getByRole("region", { name: "Timeline" }).screenshot({ path: test.info().outputPath("timeline-exhausted.png") });

  // The turn that retried through 529s and then answered: one call, its attempts said, not failed.
  await page.goto(`${url}/requests?source=otel`);
  await page
    .getByRole("table", { name: "Requests" })
    .getByRole("row")
    .filter({ hasText: "completed" })
    .getByRole("link", { name: /^turn-\d+$/ })
    .click();
  const retried = timeline.getByRole("listitem", { name: /^model call, claude-sonnet-4-5, 1\.8 s, 3 attempts$/ });
  await expect(retried).toHaveCount(1);
  // Its attempts: two retried, the third answered.
  const attempts = retried.getByRole("listitem");
  await expect(attempts).toHaveCount(3);
  for (const [i, name] of [/^attempt 1, .*, failed$/, /^attempt 2, .*, failed$/, /^attempt 3, [^,]*$/].entries())
    await expect(attempts.nth(i)).toHaveAccessibleName(name);
});

/** An OTLP/JSON logs export of `count` events no mapping knows, each of its own name. */
function unknownEvents(count: number): RecordedExport {
  const now = BigInt(Date.now()) * 1_000_000n;
  const logRecords = Array.from({ length: count }, (_, i) => ({
    timeUnixNano: String(now),
    attributes: [{ key: "event.name", value: { stringValue: `widget.event.${String(i).padStart(3, "0")}` } }],
    body: { stringValue: "something a widget did" },
  }));
  const body = {
    resourceLogs: [
      { resource: { attributes: [{ key: "service.name", value: { stringValue: "widget-app" } }] }, scopeLogs: [{ scope: { name: "widget" }, logRecords }] },
    ],
  };
  return { file: "unknown-events.json", signal: "logs", body: Buffer.from(JSON.stringify(body)), contentType: "application/json", gzip: false };
}

test("the Health page lists every name no mapping knows, 50 a page, with how many there are", async ({ page, launchApp }) => {
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort) });
  await sendExports(receiver, [unknownEvents(120)]);

  await page.goto(`${url}/health`);
  const table = page.getByRole("table", { name: "Received, not shown as a lifecycle" });
  await expect(table.getByRole("caption")).toContainText("120 names, 1–50 shown");
  const names = table.getByRole("row").filter({ hasText: "widget-app" });
  const pages = page.getByRole("navigation", { name: "Unmapped names pages" });
  const seen: string[] = [];
  const read = async () =>
    seen.push(
      ...(await names
        .getByRole("cell")
        .filter({ hasText: /^widget\.event\./ })
        .allTextContents()),
    );

  await expect(names).toHaveCount(50);
  await expect(pages).toContainText("Page 1 of 3");
  await read();
  await pages.getByRole("link", { name: "Next 50" }).click();
  await expect(page).toHaveURL(/\/health\?unmapped=2$/);
  await expect(table.getByRole("caption")).toContainText("120 names, 51–100 shown");
  await expect(names).toHaveCount(50);
  await read();
  await pages.getByRole("link", { name: "Next 50" }).click();
  await expect(pages).toContainText("Page 3 of 3");
  await expect(names).toHaveCount(20);
  await read();
  await expect(pages.getByRole("link", { name: "Next 50" })).toHaveCount(0);
  // Every name once, none cut.
  expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => `widget.event.${String(i).padStart(3, "0")}`));

  await pages.getByRole("link", { name: "Previous 50" }).click();
  await expect(page).toHaveURL(/\/health\?unmapped=2$/);
  await expect(names.first()).toContainText("widget.event.050");
});

test("the Health page counts what a dialect knows and shows as no lifecycle apart from what no dialect understands", async ({ page, launchApp }) => {
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort) });
  // Codex's own exports of a plain prompt: its inner spans and streamed events tell of no lifecycle of their own.
  await sendExports(receiver, recordedExports(path.resolve(__dirname, "../fixtures/otlp/codex-0.171.0/plain")));

  await page.goto(`${url}/health`);
  const known = page.getByRole("table", { name: "Known, not shown" });
  await expect(known.getByRole("row", { name: /^codex-cli / })).toBeVisible();
  const cells = await known
    .getByRole("row", { name: /^codex-cli / })
    .getByRole("cell")
    .allTextContents();
  expect(Number(cells[1])).toBeGreaterThanOrEqual(10);
  expect(Number(cells[2])).toBeGreaterThanOrEqual(Number(cells[1]));
  // What is left unmapped is what nobody understands: none of Codex's known names is listed there.
  const unmapped = page.getByRole("table", { name: "Received, not shown as a lifecycle" });
  for (const name of ["session_task.turn", "handle_responses", "codex.sse_event", "codex.conversation_starts"])
    await expect(unmapped.getByRole("cell", { name, exact: true })).toHaveCount(0);
  await known.screenshot({ path: test.info().outputPath("known.png") });
  // And the turn itself is on the requests page.
  await page.goto(`${url}/requests?source=otel`);
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row").filter({ hasText: "completed" })).toHaveCount(1);
});
