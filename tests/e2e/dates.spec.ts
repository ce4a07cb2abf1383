import fs from "node:fs";
import path from "node:path";
import type { Locator, Page } from "@playwright/test";
import { freePort } from "../helpers/processes";
import { recordedExports, sendExports } from "../helpers/recordedExports";
import { expect, test } from "./fixtures";

// Every date on every page reads one way: how long ago, or how soon ("5m ago", "in 3m"), with the
// exact time (ISO, UTC) on hover. No page prints a date itself.
const RELATIVE = /^(in \d+(ms|s|m|h|d)( \d+(ms|s|m|h|d))?|\d+(ms|s|m|h|d)( \d+(ms|s|m|h|d))? ago)$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const PRINTED_DATE = /\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\d{1,2}\/\d{1,2}\/\d{4}|\bUTC\b/;

/** The page shows at least `least` dates, each relative with its exact time as its title, and prints no date any other way. */
async function expectDatesOneWay(page: Page, where: Locator, least: number) {
  await expect(where).not.toContainText(PRINTED_DATE);
  const dates = where.getByText(RELATIVE);
  await expect.poll(() => dates.count(), { message: page.url() }).toBeGreaterThanOrEqual(least);
  for (const date of await dates.all()) expect(await date.getAttribute("title"), `${page.url()}: ${await date.textContent()}`).toMatch(ISO);
}

test("every page shows its dates one way: relative, the exact time on hover", async ({ page, stateDir, tracker, launchApp }) => {
  tracker.create({ requestId: "req-1", workspace: "gateway", state: "queued", sessionId: "sess-1" });
  tracker.create({ requestId: "req-2", workspace: "gateway", state: "processing" });
  tracker.transition("req-2", "failed", { fields: { error: "HTTP 502" } });
  fs.mkdirSync(path.join(stateDir, "sessions"), { recursive: true });
  const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
  fs.writeFileSync(
    path.join(stateDir, "sessions", "sess-1.json"),
    JSON.stringify({
      session_id: "sess-1",
      created_at: minutesAgo(30),
      last_updated: minutesAgo(1),
      commands_executed: [{ timestamp: minutesAgo(20), command: "add login", status: "completed" }],
      files_modified: { "src/login.ts": { last_modified: minutesAgo(10), modification_count: 1 } },
    }),
  );
  const otlpPort = await freePort();
  const { url } = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort) });
  const main = page.getByRole("main");

  await page.goto(`${url}/requests`);
  await expectDatesOneWay(page, main, 4);
  await page.getByRole("table", { name: "Requests" }).getByRole("button", { name: "Retry req-2" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Retry 1 request" }).click();
  await expect(page.getByRole("dialog").getByRole("status")).toContainText("Done");

  await page.goto(`${url}/requests/req-2`);
  await expectDatesOneWay(page, main, 5);
  await page.goto(`${url}/audit`);
  await expectDatesOneWay(page, main, 1);
  await page.goto(`${url}/sessions`);
  await expectDatesOneWay(page, main, 1);
  await page.goto(`${url}/sessions/sess-1`);
  await expectDatesOneWay(page, main, 4);
  await page.goto(`${url}/health`);
  await expectDatesOneWay(page, main, 2);

  await sendExports(`http://127.0.0.1:${otlpPort}`, recordedExports(path.resolve(__dirname, "../fixtures/otlp/claude-code-2.1.332/tool-protobuf")));
  await page.goto(`${url}/requests?source=otel`);
  await page
    .getByRole("table", { name: "Requests" })
    .getByRole("link", { name: /^turn-\d+$/ })
    .click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
  await expectDatesOneWay(page, page.getByLabel("Lifecycle"), 2);
});
