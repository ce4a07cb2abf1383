import path from "node:path";
import { openTracker } from "../../lib/tracker";
import type { Tracker } from "../../lib/types";
import { aClock } from "../helpers/clock";
import { expect, test } from "./fixtures";

const MIN = 60_000;

/**
 * Mid-minute, two minutes before the current one: a chart's point (a minute) that is never the
 * newest, however long the test takes, so no minute turns under what the test reads.
 */
function twoMinutesAgo(): number {
  return (Math.floor(Date.now() / MIN) - 2) * MIN + MIN / 2;
}

/** The library on the test's folder, on a clock the test moves: every step it records falls where the clock says. */
function trackerOn(stateDir: string, clock: { now: () => number }): Tracker {
  return openTracker({ stateDir, cacheDir: path.join(path.dirname(stateDir), "cache"), now: clock.now });
}

test("the overview's charts: a point appears as requests finish, read by keyboard, over another range", async ({ page, stateDir }) => {
  await page.goto("/");
  const summary = page.getByLabel("Activity summary");
  await expect(summary).toContainText("Attempts ended in the last 1 hour, every workspace: 0 completed, 0 failed, 0 timed out");
  const ended = page.getByRole("group", { name: /^Attempts ended/ });
  await expect(ended.locator("canvas")).toBeVisible();
  const readout = page.getByLabel("Attempts ended at the point shown");
  // Nothing ended yet: the readout is at the newest point, the interval now running.
  await expect(readout).toHaveText(/^now \(.+\): completed 0, failed 0, /);

  // Three requests run: two complete, one fails for good; the page was not reloaded.
  const clock = aClock(twoMinutesAgo());
  const tracker = trackerOn(stateDir, clock);
  for (const id of ["c1", "c2", "f1"]) tracker.create({ requestId: id, workspace: "charts", state: "queued" });
  // A wait in the queue, within the same point.
  clock.advance(2000);
  for (let i = 0; i < 3; i++) {
    const claim = tracker.claimNext({ worker: "chart-test" })!;
    if (claim.request.requestId === "f1") tracker.fail("f1", claim.token, "bad input", { retryable: false });
    else tracker.complete(claim.request.requestId, claim.token);
  }
  tracker.close();
  await expect(summary).toContainText("2 completed, 1 failed, 0 timed out");
  // Not the newest point: the readout says it shows the latest one with something to say.
  await expect(readout).toHaveText(/^latest \(.+\): completed 2, failed 1, timed out 0, released 0, stopped 0$/);
  await expect(page.getByLabel("Queue wait at the point shown")).toHaveText(/^latest \(.+\): p50 \d+(ms|s), p95 \d+(ms|s)$/);

  // By keyboard: the point before has none, the next is theirs again; End goes to the newest, where none ended.
  await ended.focus();
  await page.keyboard.press("ArrowLeft");
  await expect(readout).not.toContainText("latest");
  await expect(readout).toContainText("completed 0, failed 0");
  await page.keyboard.press("ArrowRight");
  await expect(readout).toContainText("completed 2, failed 1");
  await page.keyboard.press("End");
  await expect(readout).toContainText("completed 0, failed 0");

  // Another range: the same attempts, counted per quarter hour.
  await page.getByRole("group", { name: "Chart range" }).getByRole("button", { name: "24h" }).click();
  await expect(page.getByRole("button", { name: "24h" })).toHaveAttribute("aria-pressed", "true");
  await expect(summary).toContainText("in the last 24 hours, every workspace: 2 completed, 1 failed");
  await expect(
    page
      .getByRole("group", { name: /^Attempts ended/ })
      .locator("..")
      .getByText("(per 15m)"),
  ).toBeVisible();
});

test("the requests page's charts follow its workspace filter", async ({ page, tracker }) => {
  for (const [id, workspace] of [
    ["a1", "alpha"],
    ["a2", "alphabet"],
    ["b1", "beta"],
  ] as const)
    tracker.create({ requestId: id, workspace, state: "queued" });
  for (let i = 0; i < 3; i++) {
    const claim = tracker.claimNext({ worker: "chart-test" })!;
    tracker.complete(claim.request.requestId, claim.token);
  }
  await page.goto("/requests?workspacePrefix=alpha");
  await page.getByText("Activity charts for this workspace filter").click();
  const summary = page.getByLabel("Activity summary");
  await expect(summary).toContainText("workspaces starting with alpha: 2 completed");

  await page.goto("/requests?workspace=beta&states=completed");
  await page.getByText("Activity charts for this workspace filter").click();
  await expect(summary).toContainText("workspace beta: 1 completed");
  await expect(summary).toContainText("The charts follow the workspace filter only.");

  // A hand-made URL with both filters: the table shows nothing, and so do the charts, saying why.
  await page.goto("/requests?workspace=beta&workspacePrefix=alpha");
  await page.getByText("Activity charts for this workspace filter").click();
  await expect(page.getByText("No workspace matches both workspace filters.")).toBeVisible();
  const both = await page.request.get("/api/activity?workspace=beta&workspacePrefix=alpha");
  expect(both.status()).toBe(400);
  expect((await both.json()).error.message).toContain("Use workspace or workspacePrefix, not both");
});

test("at rest, the charts move on with the clock without asking the server", async ({ page, stateDir }) => {
  const tracker = trackerOn(stateDir, aClock(twoMinutesAgo()));
  tracker.create({ requestId: "r1", workspace: "rest", state: "queued" });
  const claim = tracker.claimNext({ worker: "chart-test" })!;
  tracker.complete("r1", claim.token);
  tracker.close();
  await page.clock.install();
  await page.goto("/");
  await expect(page.getByRole("status", { name: "Live status" })).toContainText("live");
  const readout = page.getByLabel("Attempts ended at the point shown");
  await expect(readout).toHaveText(/^latest \(.+\): completed 1, /);
  // The page's clock stands still from here: only the test moves it.
  await page.clock.pauseAt(Date.now() + 5_000);
  const asked: string[] = [];
  page.on("request", (request) => {
    if (request.url().includes("/api/")) asked.push(request.url());
  });
  // The newest point, by its time.
  const chart = page.getByRole("group", { name: /^Attempts ended/ });
  await chart.focus();
  await page.keyboard.press("End");
  await expect(readout).toContainText("completed 0, failed 0");
  const newest = async () => (await readout.textContent())!.replace(/: completed .*$/, "");
  const before = await newest();
  // Three minutes on: the newest point is another, the completion is still counted, and nothing was fetched.
  await page.clock.fastForward("03:00");
  await page.keyboard.press("End");
  await expect.poll(newest).not.toBe(before);
  await expect(readout).toContainText("completed 0, failed 0");
  await expect(page.getByLabel("Activity summary")).toContainText("1 completed");
  expect(asked).toEqual([]);
});

test.describe("in the viewer's own zone", () => {
  // India's clock (UTC+5:30): its half hour shows that the axis reads the viewer's zone, not UTC or the server's.
  test.use({ timezoneId: "Asia/Kolkata" });

  test("a chart's time axis reads clock times (HH:MM), with the day once the range spans midnight", async ({ page }) => {
    await page.goto("/");
    const axis = page.getByLabel("Attempts ended: times on the axis");
    await expect(axis).toHaveText(/^\d\d:\d\d(, \d\d:\d\d)+$/);
    // Each time is within the hour shown, on India's clock (the running minute's end may be a minute ahead).
    const minutesOf = (text: string) => Number(text.slice(0, 2)) * 60 + Number(text.slice(3, 5));
    const now = minutesOf(new Date().toLocaleTimeString("en-GB", { timeZone: "Asia/Kolkata", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }));
    const minutesBefore = (label: string) => ((now - minutesOf(label) + 1440 + 720) % 1440) - 720;
    for (const label of ((await axis.textContent()) ?? "").split(", ")) {
      expect(minutesBefore(label), label).toBeGreaterThanOrEqual(-1);
      expect(minutesBefore(label), label).toBeLessThanOrEqual(61);
    }
    // The line under the chart says its point's time on the same clock.
    await expect(page.getByLabel("Attempts ended at the point shown")).toHaveText(/^now \(\d\d:\d\d\): /);

    await page.getByRole("group", { name: "Chart range" }).getByRole("button", { name: "24h" }).click();
    // A day back always runs over a midnight: the day is said beside the first time of a day.
    await expect(axis).toHaveText(/^(\d\d:\d\d( [A-Z][a-z]{2} \d{1,2})?, )*\d\d:\d\d [A-Z][a-z]{2} \d{1,2}(, \d\d:\d\d( [A-Z][a-z]{2} \d{1,2})?)*$/);
  });
});
