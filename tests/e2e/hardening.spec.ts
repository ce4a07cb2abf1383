import { plantBadFiles, GOOD_IDS } from "../helpers/badFiles";
import { expect, test } from "./fixtures";

test("every file of the bad-file corpus is listed in health with its reason, and the good requests still show", async ({ page, stateDir, app, launchApp }) => {
  // Written while the server runs: the watcher meets each one.
  const expected = plantBadFiles(stateDir);
  await page.goto("/health");
  const unreadable = page.getByRole("table", { name: "Unreadable files" });
  await expect(page.getByRole("heading", { name: `Files that could not be read (${expected.size})` })).toBeVisible({ timeout: 12_000 });
  for (const [name, reason] of expected) {
    await expect(unreadable.getByRole("row", { name: new RegExp(`requests/${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`) })).toContainText(reason);
  }
  await page.goto("/requests");
  for (const id of GOOD_IDS) await expect(page.getByRole("table", { name: "Requests" }).getByRole("row", { name: new RegExp(id) })).toBeVisible();

  // A second server starting on the same directory (a start-up, not the watcher) reports the same.
  const second = await launchApp();
  await page.goto(`${second.url}/health`);
  await expect(page.getByRole("heading", { name: `Files that could not be read (${expected.size})` })).toBeVisible();
  expect((await fetch(`${app.url}/api/health`)).ok).toBe(true);
});
