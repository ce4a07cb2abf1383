import { expect, test } from "./fixtures";

/** A chart's point is a minute: start what a test reads point by point early in one, so the minute does not turn under it. */
async function earlyInAMinute(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 25_000) await new Promise((resolve) => setTimeout(resolve, left + 250));
}

test("the overview's charts: a point appears as requests finish, read by keyboard, over another range", async ({ page, tracker }) => {
  await page.goto("/");
  const summary = page.getByLabel("Activity summary");
  await expect(summary).toContainText("Attempts ended in the last 1 hour, every workspace: 0 completed, 0 failed, 0 timed out");
  const ended = page.getByRole("group", { name: /^Attempts ended/ });
  await expect(ended.locator("canvas")).toBeVisible();
  const readout = page.getByLabel("Attempts ended at the point shown");
  await expect(readout).toContainText("completed 0, failed 0");

  // Three requests run: two complete, one fails for good; the page was not reloaded.
  await earlyInAMinute();
  for (const id of ["c1", "c2", "f1"]) tracker.create({ requestId: id, workspace: "charts", state: "queued" });
  for (let i = 0; i < 3; i++) {
    const claim = tracker.claimNext({ worker: "chart-test" })!;
    if (claim.request.requestId === "f1") tracker.fail("f1", claim.token, "bad input", { retryable: false });
    else tracker.complete(claim.request.requestId, claim.token);
  }
  await expect(summary).toContainText("2 completed, 1 failed, 0 timed out");
  await expect(readout).toHaveText(/^now \(.+\): completed 2, failed 1, timed out 0, released 0, stopped 0$/);
  await expect(page.getByLabel("Queue wait at the point shown")).toHaveText(/^now \(.+\): p50 \d+(ms|s), p95 \d+(ms|s)$/);

  // By keyboard: the point before has none; End comes back to the newest.
  await ended.focus();
  await page.keyboard.press("ArrowLeft");
  await expect(readout).not.toContainText("now");
  await expect(readout).toContainText("completed 0, failed 0");
  await page.keyboard.press("End");
  await expect(readout).toContainText("completed 2, failed 1");

  // Another range: the same attempts, counted per quarter hour.
  await page.getByRole("group", { name: "Chart range" }).getByRole("button", { name: "24h" }).click();
  await expect(page.getByRole("button", { name: "24h" })).toHaveAttribute("aria-pressed", "true");
  await expect(summary).toContainText("in the last 24 hours, every workspace: 2 completed, 1 failed");
  await expect(page.getByRole("group", { name: /^Attempts ended/ }).locator("..").getByText("(per 15m)")).toBeVisible();
});

test("the requests page's charts follow its workspace filter", async ({ page, tracker }) => {
  for (const [id, workspace] of [["a1", "alpha"], ["a2", "alphabet"], ["b1", "beta"]] as const) tracker.create({ requestId: id, workspace, state: "queued" });
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

test("at rest, the charts move on with the clock without asking the server", async ({ page, tracker }) => {
  await earlyInAMinute();
  tracker.create({ requestId: "r1", workspace: "rest", state: "queued" });
  const claim = tracker.claimNext({ worker: "chart-test" })!;
  tracker.complete("r1", claim.token);
  await page.clock.install();
  await page.goto("/");
  await expect(page.getByRole("status", { name: "Live status" })).toContainText("live");
  const readout = page.getByLabel("Attempts ended at the point shown");
  await expect(readout).toHaveText(/^now \(.+\): completed 1, /);
  const asked: string[] = [];
  page.on("request", (request) => {
    if (request.url().includes("/api/")) asked.push(request.url());
  });
  // Three minutes on: the completion is three intervals back, and nothing was fetched.
  await page.clock.fastForward("03:00");
  await expect(readout).toHaveText(/^latest \(.+\): completed 1, /);
  await page.getByRole("group", { name: /^Attempts ended/ }).focus();
  await page.keyboard.press("End");
  await expect(readout).toContainText("completed 0, failed 0");
  expect(asked).toEqual([]);
});
