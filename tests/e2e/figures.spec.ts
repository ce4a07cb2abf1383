import type { Request } from "@playwright/test";
import path from "node:path";
import { openRoles } from "../../lib/tracker";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { expect, test } from "./fixtures";

test.use({ appEnv: { REQWATCH_QUEUED_STUCK_AFTER: "1s", REQWATCH_MONITOR_INTERVAL: "500ms" } });

/** Every request the page starts, but its event stream. */
function recordRequests(page: import("@playwright/test").Page): string[] {
  const seen: string[] = [];
  page.on("request", (request: Request) => {
    const url = new URL(request.url());
    if (url.pathname !== "/api/events") seen.push(`${request.method()} ${url.pathname}${url.search}`);
  });
  return seen;
}

const MARKER = "/api/health?marker";

/**
 * What the page has asked so far: a request of the test's own, made from the page, is seen after
 * every request the page started before it, so none can be on its way still.
 */
async function askedSoFar(page: import("@playwright/test").Page, seen: string[]): Promise<string[]> {
  await Promise.all([page.waitForRequest((request) => request.url().endsWith(MARKER)), page.evaluate((marker) => void fetch(marker), MARKER)]);
  return seen.filter((entry) => entry !== `GET ${MARKER}`);
}

test("an open tab makes no requests at rest, and a change updates the rows it carries without asking the server", async ({ page, tracker }) => {
  for (let i = 0; i < 30; i++) tracker.create({ requestId: `r-${i}`, workspace: "gateway", state: "queued" });
  // The page's clock is the test's to move: a minute of it runs every timer the tab has, at once.
  await page.clock.install();
  await page.goto("/requests");
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row")).toHaveCount(31);
  await expect(page.getByRole("status", { name: "Live status" })).toContainText("live");
  const seen = recordRequests(page);

  await page.clock.runFor("01:00");
  expect(await askedSoFar(page, seen)).toEqual([]);

  tracker.transition("r-3", "processing");
  tracker.create({ requestId: "brand-new", workspace: "gateway", state: "queued" });
  // Newest update first: the two changed rows are on top, in their sorted place.
  await expect(table.getByRole("row").nth(1)).toContainText("brand-new");
  await expect(table.getByRole("row").nth(2)).toContainText("r-3");
  await expect(table.getByRole("row").nth(2)).toContainText("processing");
  await expect(table.getByRole("row")).toHaveCount(32);
  // Whatever the changes set off on a timer (a list refresh, say) has run.
  await page.clock.runFor("00:10");
  expect(await askedSoFar(page, seen)).toEqual([]);
});

test("after a short stream outage, a longer one still falls back to polling", async ({ page }) => {
  // The page falls back to polling once its stream has been down this long (components/data/LiveFeed.tsx).
  const FALLBACK_AFTER_MS = 3000;
  const RETRY_MS = 300;
  let mode: "short" | "down" | "pass" = "pass";
  let shortStreams = 0;
  await page.route("**/api/events*", async (route) => {
    if (mode === "pass") return route.continue();
    // "short": a stream that opens and ends at once, so the browser reconnects after the retry it names.
    if (mode === "short") {
      shortStreams++;
      return route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `retry: ${RETRY_MS}\n\n` });
    }
    return route.abort("connectionrefused");
  });
  await page.goto("/requests");
  const live = page.getByRole("status", { name: "Live status" });
  await expect(live).toContainText("live");
  mode = "short";
  await page.reload();
  // Each reconnect waits the retry at least, so this many span more than the fallback's delay,
  // however fast they come: short outages, one after another, never fell back.
  await expect.poll(() => shortStreams, { timeout: 30_000 }).toBeGreaterThanOrEqual(Math.ceil(FALLBACK_AFTER_MS / RETRY_MS) + 2);
  await expect(live).not.toContainText("polling");
  mode = "down";
  await expect(live).toContainText("stream down: polling every 5 s", { timeout: 10_000 });
});

test("a stuck queued request says why, and can be cancelled after a dry run; the audit log lists it", async ({ page, tracker }) => {
  tracker.create({ requestId: "waiting", workspace: "nightly", state: "queued" });
  await page.goto("/requests?stuck=1");
  const row = page.getByRole("table", { name: "Requests" }).getByRole("row", { name: /waiting/ });
  await expect(row).toContainText(/stuck: queued \d+s; no reqwatch worker has claimed from workspace nightly in 1s \(last claim: never\)/, { timeout: 10_000 });
  await row.getByRole("button", { name: "Cancel waiting" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText(
    "1 of 1 matching request would be cancelled (moved to failed; a worker's late result is dropped) (1 queued)",
  );
  await dialog.getByRole("button", { name: "Cancel 1" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 1 changed, 0 skipped.");
  expect(tracker.get("waiting")).toMatchObject({ state: "failed", error: "cancelled" });
  await dialog.getByRole("link", { name: "See the audit log" }).click();
  const entry = page.getByRole("table", { name: "Audit log" }).getByRole("row", { name: /Cancel waiting/ });
  await expect(entry).toContainText("done");
  await entry.getByText("1 changed").click();
  await entry.getByRole("link", { name: "waiting" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("failed");
  await expect(page.getByRole("table", { name: "History" })).toContainText("cancelled");
  await expect(page.getByRole("button", { name: "Cancel request" })).toBeDisabled();
});

test("a processing request cancelled from its page: the worker's late result is dropped", async ({ page, tracker }) => {
  tracker.create({ requestId: "running", workspace: "gateway", state: "queued" });
  const claim = tracker.claimNext()!;
  await page.goto("/requests/running");
  await page.getByRole("button", { name: "Cancel request" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("(1 processing)");
  await dialog.getByRole("button", { name: "Cancel 1" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 1 changed");
  await dialog.getByRole("button", { name: "Close" }).click();
  expect(tracker.complete("running", claim.token, { output: "late" }).outcome).toBe("dropped");
  await expect(page.getByRole("table", { name: "History" })).toContainText("late delivery, dropped");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("failed");
});

test("a cleanup does no more than its dry run said, and says which of them changed since", async ({ page, stateDir, launchApp }) => {
  const now = Date.now();
  writeRequestFile(stateDir, aRequest({ requestId: "old", state: "completed", lastUpdatedAt: now - 2 * 60 * 60 * 1000 }));
  writeRequestFile(stateDir, aRequest({ requestId: "old-too", state: "failed", lastUpdatedAt: now - 3 * 60 * 60 * 1000, version: 3 }));
  const { url } = await launchApp();
  await page.goto(`${url}/requests`);
  await page.getByRole("button", { name: "Clean up…" }).click();
  const form = page.getByRole("form", { name: "Clean up" });
  await form.getByLabel("Not updated for").selectOption("1h");
  await form.getByRole("button", { name: "Dry run" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("2 of 2 matching requests would be archived and removed");
  // Meanwhile someone retries one of the two, and another program writes one that the filter matches
  // now but the dry run did not list.
  const { operator, close } = openRoles({ stateDir, cacheDir: path.join(path.dirname(stateDir), "cache") });
  operator.retry({ ids: ["old-too"] });
  close();
  writeRequestFile(stateDir, aRequest({ requestId: "edge", state: "completed", lastUpdatedAt: now - 2 * 60 * 60 * 1000 }));
  await expect.poll(async () => (await page.request.get(`${url}/api/requests/edge`)).status()).toBe(200);
  await dialog.getByRole("button", { name: "Clean up 2" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 1 changed, 1 skipped.");
  await expect(dialog.getByRole("status")).toContainText("1 skipped: changed since the dry run");
  await page.goto(`${url}/requests/edge`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
});

test("a session id that requests carry is a session: listed, with a page of its requests", async ({ page, tracker }) => {
  tracker.create({ requestId: "in-session", workspace: "gateway", state: "queued", sessionId: "s-demo" });
  tracker.create({ requestId: "in-session-2", workspace: "gateway", state: "queued", sessionId: "s-demo" });
  await page.goto("/requests");
  await page
    .getByRole("table", { name: "Requests" })
    .getByRole("row", { name: /in-session-2/ })
    .getByRole("link", { name: "s-demo" })
    .click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Session s-demo");
  await expect(page.getByLabel("Requests seen")).toContainText("2 requests carry this id");
  await expect(page.getByRole("main").getByRole("status")).toContainText("No context was recorded for this session");
  await expect(page.getByRole("table", { name: "Session requests" }).getByRole("row")).toHaveCount(3);
  await page.goto("/sessions");
  await expect(page.getByRole("table", { name: "Sessions" }).getByRole("row", { name: /s-demo/ })).toContainText("no recorded context");
});

test("the empty state gives the exact command for the folder shown; the overview's rate covers the time there is data for", async ({
  page,
  stateDir,
  tracker,
}) => {
  await page.goto("/");
  await expect(page.getByRole("main").getByRole("status")).toContainText(`npx reqwatch create --state-dir ${stateDir} --workspace demo --state queued`);
  tracker.create({ requestId: "quick", workspace: "gateway", state: "processing" });
  tracker.transition("quick", "completed");
  await page.reload();
  // Seconds of data: what happened in them, and no rate stretched to a minute.
  await expect(page.getByRole("region", { name: "Last hour" })).toContainText(/1 request finished in the \d+s since the first request: 1 completed/);
  await expect(page.getByRole("region", { name: "Last hour" })).not.toContainText("/min");
});
