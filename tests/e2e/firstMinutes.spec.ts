import { expect, test } from "./fixtures";

test("an address with no page answers 404 in the dashboard's style, with the ways back", async ({ page }) => {
  const response = await page.goto("/no/such/page");
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
  // The dashboard's own page under its header, not Next.js's default one.
  await expect(page.getByRole("navigation", { name: "Pages" })).toBeVisible();
  await expect(page.getByText("This page could not be found")).toHaveCount(0);
  await page.getByRole("main").getByRole("link", { name: "requests" }).click();
  await expect(page).toHaveURL(/\/requests$/);

  await page.goto("/requests/gone-for-good");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Request not found");
  await page.getByRole("link", { name: "Back to the requests" }).click();
  await expect(page).toHaveURL(/\/requests$/);
});

test("an empty folder's overview leads with what to do next, and it goes when the first request arrives", async ({ page, tracker }) => {
  await page.goto("/");
  const lead = page.getByRole("main").getByRole("status");
  await expect(lead).toContainText("No requests yet");
  // First after the title: before the counts and the charts.
  const order = await page.evaluate(() => {
    const main = document.querySelector("main")!;
    const status = main.querySelector('[role="status"]')!;
    const counts = main.querySelector('[aria-label="Requests by state"]')!;
    return status.compareDocumentPosition(counts) & Node.DOCUMENT_POSITION_FOLLOWING ? "lead first" : "counts first";
  });
  expect(order).toBe("lead first");
  tracker.create({ requestId: "first", workspace: "gateway", state: "queued" });
  await expect(page.getByRole("table", { name: "Recent requests" }).getByRole("row", { name: /first/ })).toBeVisible();
  await expect(page.getByText("No requests yet")).toHaveCount(0);
});

test("a dialog's buttons say what they do: cancel the request, or keep it", async ({ page, tracker }) => {
  tracker.create({ requestId: "waiting", workspace: "gateway", state: "queued" });
  await page.goto("/requests/waiting");
  await page.getByRole("button", { name: "Cancel request" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("1 of 1 matching request would be cancelled");
  await expect(dialog.getByRole("button")).toHaveText(["Cancel 1 request", "Don't cancel"]);
  await dialog.getByRole("button", { name: "Don't cancel" }).click();
  await expect(dialog).toHaveCount(0);
  expect(tracker.get("waiting")?.state).toBe("queued");
});

for (const viewport of [{ width: 1280, height: 800 }, { width: 1400, height: 900 }]) {
  test(`at ${viewport.width} px a row's actions and the newest time are in view, without scrolling sideways`, async ({ page, tracker }) => {
    await page.setViewportSize(viewport);
    // Ids, sessions and models as long as real ones.
    for (let i = 0; i < 6; i++) {
      const request = tracker.create({ requestId: crypto.randomUUID(), workspace: `gateway-${i % 3}-production`, state: "queued", sessionId: crypto.randomUUID(), model: "claude-sonnet-4-5-20250929", prompt: `question ${i}` });
      const claimed = tracker.claimNext({ workspace: request.workspace })!;
      tracker.fail(claimed.request.requestId, claimed.token, "model overloaded", { retryable: false });
    }
    await page.goto("/requests");
    const table = page.getByRole("table", { name: "Requests" });
    const retry = table.getByRole("button", { name: /^Retry / }).first();
    await expect(retry).toBeVisible();
    const box = (await retry.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    // The whole row fits its box: nothing to scroll sideways for, the times included.
    expect(await table.evaluate((element) => element.scrollWidth - element.parentElement!.clientWidth)).toBeLessThanOrEqual(0);

    await page.goto("/");
    const updated = page.getByRole("table", { name: "Recent requests" }).getByRole("row").nth(1).getByRole("cell").last();
    await expect(updated).toContainText("ago");
    const cell = (await updated.boundingBox())!;
    expect(cell.x + cell.width).toBeLessThanOrEqual(viewport.width);
  });
}

test.describe("one figure, one moment", () => {
  test.use({ appEnv: { REQWATCH_QUEUED_STUCK_AFTER: "1s", REQWATCH_MONITOR_INTERVAL: "500ms" } });

  test("Health's stuck count is the header's, as the requests cross the threshold", async ({ page, tracker }) => {
    await page.goto("/health");
    await expect(page.getByLabel("Thresholds")).toContainText("queued stuck after 1s (REQWATCH_QUEUED_STUCK_AFTER)");
    const badge = page.getByRole("link", { name: /^\d+ stuck$/ });
    const count = page.getByLabel("Stuck count");
    for (let i = 1; i <= 3; i++) {
      tracker.create({ requestId: `waiting-${i}`, workspace: "nightly", state: "queued" });
      await expect(badge).toHaveText(`${i} stuck`);
      await expect(count).toHaveText(String(i));
    }
  });
});

test("the last hour says why its latency's n is not the number finished", async ({ page, tracker }) => {
  tracker.create({ requestId: "served", workspace: "gateway", state: "queued" });
  const claim = tracker.claimNext({ workspace: "gateway" })!;
  tracker.complete("served", claim.token, { output: "ok" });
  tracker.create({ requestId: "never-taken", workspace: "gateway", state: "queued" });
  tracker.cancel(["never-taken"]);
  await page.goto("/");
  const lastHour = page.getByRole("region", { name: "Last hour" });
  await expect(lastHour).toContainText("2 requests finished");
  await expect(page.getByRole("table", { name: "Latency" }).getByRole("row", { name: /Queue wait/ }).getByRole("cell").last()).toHaveText("1");
  await expect(lastHour).toContainText("n: 1 finished without a wait to measure (cancelled before a worker took it, or written without one).");
});

test("opening Clean up… puts its form on a line of its own: the action bar stays one line", async ({ page, tracker }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  tracker.create({ requestId: "any", workspace: "gateway", state: "queued" });
  await page.goto("/requests");
  const top = async (role: "button" | "link", name: string) => (await page.getByRole(role, { name }).boundingBox())!.y;
  const before = [await top("button", "Retry all matching"), await top("link", "Export CSV")];
  await page.getByRole("button", { name: "Clean up…" }).click();
  await expect(page.getByRole("form", { name: "Clean up" })).toBeVisible();
  // Same line as before (a pixel's shift aside) and as each other.
  const after = [await top("button", "Retry all matching"), await top("link", "Export CSV")];
  expect(Math.abs(after[0]! - before[0]!)).toBeLessThan(2);
  expect(Math.abs(after[1]! - after[0]!)).toBeLessThan(2);
  const form = (await page.getByRole("form", { name: "Clean up" }).boundingBox())!;
  expect(form.y).toBeGreaterThan(before[0]!);
});
