import { expect, test } from "./fixtures";

test.use({ appEnv: { REQWATCH_QUEUED_STUCK_AFTER: "1s", REQWATCH_MONITOR_INTERVAL: "250ms" } });

// The browser's notifications, recorded: what the page shows a person, and the link each one opens.
test.beforeEach(async ({ page, context }) => {
  await context.grantPermissions(["notifications"]);
  await page.addInitScript(() => {
    const shown: { title: string; body: string; click: () => void }[] = [];
    (window as unknown as { shown: typeof shown }).shown = shown;
    class RecordedNotification {
      static permission = "granted";
      static requestPermission = async () => "granted";
      onclick: (() => void) | null = null;
      constructor(title: string, options?: { body?: string }) {
        shown.push({ title, body: options?.body ?? "", click: () => this.onclick?.() });
      }
      close() {}
    }
    (window as unknown as { Notification: unknown }).Notification = RecordedNotification;
  });
});

const shown = (page: import("@playwright/test").Page) =>
  page.evaluate(() => (window as unknown as { shown: { title: string; body: string }[] }).shown.map(({ title, body }) => ({ title, body })));

test("the tab's title carries the stuck count; with notifications on, a newly stuck request shows one that opens it", async ({ page, tracker }) => {
  await page.goto("/");
  await expect(page).toHaveTitle("reqwatch");
  await page.getByRole("button", { name: "Notify me" }).click();
  await expect(page.getByRole("button", { name: "Notifications on" })).toHaveAttribute("aria-pressed", "true");

  tracker.create({ requestId: "forgotten", workspace: "nobody-serves", state: "queued" });
  await expect(page).toHaveTitle("(1 stuck) reqwatch");
  await expect
    .poll(() => shown(page))
    .toEqual([{ title: "1 stuck", body: expect.stringMatching(/^forgotten: queued \d+(ms|s); no reqwatch worker has claimed from workspace nobody-serves/) }]);
  await page.evaluate(() => (window as unknown as { shown: { click: () => void }[] }).shown[0]!.click());
  await expect(page).toHaveURL(/\/requests\/forgotten$/);
  // The count stays in the title on every page.
  await expect(page).toHaveTitle("(1 stuck) reqwatch");

  // Off again: the choice is kept across a reload, and nothing more is shown.
  await page.getByRole("button", { name: "Notifications on" }).click();
  await page.reload();
  await expect(page.getByRole("button", { name: "Notify me" })).toHaveAttribute("aria-pressed", "false");
  tracker.create({ requestId: "forgotten-too", workspace: "nobody-serves", state: "queued" });
  await expect(page).toHaveTitle("(2 stuck) reqwatch");
  expect(await shown(page)).toEqual([]);
});

test("a failure shows a notification that opens the request; a second within 10 s shows none", async ({ page, tracker }) => {
  // The page's clock stands still (its timers still run): the second failure comes within the gap however slow the test is.
  await page.clock.setFixedTime(Date.now());
  await page.goto("/requests");
  await page.getByRole("button", { name: "Notify me" }).click();
  await expect(page.getByRole("button", { name: "Notifications on" })).toBeVisible();

  tracker.create({ requestId: "doomed", workspace: "gw", state: "processing" });
  tracker.transition("doomed", "failed", { fields: { error: "rate limited" } });
  await expect.poll(() => shown(page)).toEqual([{ title: "Request doomed failed", body: "workspace gw" }]);
  tracker.create({ requestId: "doomed-too", workspace: "gw", state: "processing" });
  tracker.transition("doomed-too", "failed");
  // Its row shows the failure from the same change the notifications heard first: they have decided.
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row", { name: /doomed-too/ })).toContainText("failed");
  expect(await shown(page)).toHaveLength(1);

  await page.evaluate(() => (window as unknown as { shown: { click: () => void }[] }).shown[0]!.click());
  await expect(page).toHaveURL(/\/requests\/doomed$/);
});

test("a later write to a request that already failed (its callback result, say) shows nothing", async ({ page, tracker }) => {
  tracker.create({ requestId: "failed-before", workspace: "gw", state: "processing" });
  tracker.transition("failed-before", "failed", { fields: { error: "rate limited" } });
  await page.goto("/requests");
  await page.getByRole("button", { name: "Notify me" }).click();
  await expect(page.getByRole("button", { name: "Notifications on" })).toBeVisible();

  tracker.update("failed-before", { fields: { callback: { success: false, attempts: 1, retryTimestamps: [], error: "HTTP 502" } } });
  tracker.create({ requestId: "marker", workspace: "gw", state: "queued" });
  await expect(page.getByRole("table", { name: "Requests" })).toContainText("marker");
  expect(await shown(page)).toEqual([]);
});
