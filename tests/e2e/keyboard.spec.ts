import { expect, test } from "./fixtures";

test("the requests table by keyboard: ? lists the keys, j/k move, x selects, r retries through its dry run, Enter opens, / searches", async ({
  page,
  tracker,
}) => {
  for (let i = 0; i < 4; i++) {
    tracker.create({ requestId: `failed-${i}`, workspace: "gw", state: "processing", prompt: `job ${i}` });
    tracker.transition(`failed-${i}`, "failed", { fields: { error: "rate limited" } });
  }
  await page.goto("/requests?sort=createdAt&order=asc");
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row")).toHaveCount(5);
  const current = table.locator('tr[aria-current="true"]');
  // The rows are there from the server before the page's code runs: keys count once it is live.
  await expect(page.getByRole("status", { name: "Live status" })).toContainText("live");

  await page.keyboard.press("?");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await expect(help).toContainText("next / previous row");
  await page.keyboard.press("Escape");
  await expect(help).toHaveCount(0);

  await page.keyboard.press("j");
  await expect(current).toContainText("failed-0");
  await page.keyboard.press("j");
  await page.keyboard.press("j");
  await page.keyboard.press("k");
  await expect(current).toContainText("failed-1");
  await page.keyboard.press("x");
  await expect(page.getByRole("checkbox", { name: "Select failed-1" })).toBeChecked();
  await page.keyboard.press("j");
  await page.keyboard.press("x");
  await expect(page.getByRole("button", { name: "Retry selected (2)" })).toBeVisible();

  // r: the selected rows, through the same dry run as the button.
  await page.keyboard.press("r");
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("2 of 2 matching requests would");
  await dialog.getByRole("button", { name: /^Retry 2/ }).click();
  await expect.poll(() => ["failed-1", "failed-2"].map((id) => tracker.get(id)!.state)).toEqual(["queued", "queued"]);
  expect(tracker.get("failed-0")!.state).toBe("failed");
  await dialog.getByRole("button", { name: "Close" }).click();

  // Keys typed into a field are the field's.
  await page.keyboard.press("/");
  await expect(page.getByLabel("Search")).toBeFocused();
  await page.keyboard.type("job");
  await expect(page.getByLabel("Search")).toHaveValue("job");
  await expect(current).toHaveCount(1);
  // The search applies once typing pauses: a row opened before that could lose to it.
  await expect(page).toHaveURL(/q=job/);

  // Enter on a focused control is the control's, as ever.
  await page.getByRole("button", { name: "Retry all matching" }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("dialog")).toContainText("Dry run");
  await page.getByRole("dialog").getByRole("button", { name: "Don't retry" }).click();
  // While a dialog is open the keys are its own: wait until it has gone.
  await expect(page.getByRole("dialog")).toHaveCount(0);

  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press("k");
  // The key moved the cursor (a busy machine may still be rendering the closed dialog's page).
  await expect(current).toContainText(/failed-\d/);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/requests\/failed-\d$/);
});
