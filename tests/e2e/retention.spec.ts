import fs from "node:fs";
import { aRequest, anOldCompletedRequest, writeRequestFile } from "../helpers/builders";
import { expect, test } from "./fixtures";

test("the monitor's retention removes what is past it; the overview says when and what, Health the sizes, and the audit log undoes it", async ({
  page,
  stateDir,
  launchApp,
}) => {
  for (const id of ["old-1", "old-2", "old-3"]) writeRequestFile(stateDir, anOldCompletedRequest(id));
  writeRequestFile(stateDir, aRequest({ requestId: "recent", state: "completed" }));
  // The default retention (24 h), run by the dashboard's monitor as it starts.
  const { url } = await launchApp();

  await page.goto(url);
  const note = page.getByLabel("Retention");
  await expect(note).toContainText("finished requests go 1d after their last update, into the archive, which keeps them 30d");
  await expect(note).toContainText(/Last ran .*ago: removed 3 finished requests \(audit #\d+, undoable\)/);
  await expect(page.getByRole("list", { name: "Requests by state" }).getByRole("listitem", { name: "completed: 1" })).toBeVisible();
  for (const id of ["old-1", "old-2", "old-3"]) expect(fs.existsSync(`${stateDir}/requests/${id}.json`)).toBe(false);
  expect(fs.existsSync(`${stateDir}/requests/recent.json`)).toBe(true);

  await page.getByRole("link", { name: "Health" }).click();
  await expect(page.locator("dt:text-is('Request files') + dd")).toHaveText(/^\d+ KB$/);
  await expect(page.locator("dt:text-is('Archive size') + dd")).toHaveText(/^\d+ KB \(cleaned-up requests and the audit log\)$/);
  const retention = page.getByRole("definition").and(page.locator("dl[aria-label='Retention'] dd"));
  await expect(retention.nth(0)).toHaveText("finished ones archived and removed 1d after their last update, every 10m");
  await expect(retention.nth(2)).toHaveText(/ago: removed 3, skipped 0, archive dropped 0$/);

  await page.goto(url);
  await note.getByRole("link", { name: /audit #\d+/ }).click();
  const audit = page.getByRole("table", { name: "Audit log" });
  const entry = audit.getByRole("row").filter({ hasText: "retention" }).filter({ hasNotText: "Undo #" });
  await expect(entry).toContainText("Clean up completed, failed, timeout requests not updated for 1d");
  await expect(entry).toContainText("done");
  await entry.getByText("3 changed").click();
  await expect(entry.getByRole("list", { name: "Changed requests" }).getByRole("link")).toHaveText(["old-1", "old-2", "old-3"]);
  await entry.getByRole("button", { name: /Undo/ }).click();
  const undo = page.getByRole("dialog");
  await expect(undo.getByRole("region", { name: "Dry run" })).toContainText("Dry run: 3 of 3 matching requests would be restored from the archive.");
  await undo.getByRole("button", { name: "Restore 3" }).click();
  await expect(undo.getByRole("status")).toContainText("Done: 3 changed, 0 skipped.");
  for (const id of ["old-1", "old-2", "old-3"]) expect(fs.existsSync(`${stateDir}/requests/${id}.json`)).toBe(true);
});
