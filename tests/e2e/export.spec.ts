import fs from "node:fs";
import { expect, test } from "./fixtures";

test("the requests page exports what its filters match, as CSV and as JSON Lines, every page included", async ({ page, tracker }) => {
  for (let i = 0; i < 200; i++) {
    const id = `req-${String(i).padStart(3, "0")}`;
    tracker.create({ requestId: id, workspace: i % 3 ? "alpha" : "beta", state: "processing", model: "sonnet" });
    if (i % 2) tracker.transition(id, "failed", { fields: { error: "boom" } });
  }

  await page.goto("/requests?states=failed&workspace=alpha&sort=createdAt&order=asc");
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row").nth(1)).toBeVisible();
  // What the table lists for this filter, every page of it: what the export must hold, in its order.
  const listed = async () => (await table.getByRole("row").allInnerTexts()).slice(1).map((text) => text.match(/req-\d{3}/)![0]);
  const expected = await listed();
  while (await page.getByRole("button", { name: "Next page" }).isEnabled()) {
    const firstOfPage = (await listed())[0]!;
    await page.getByRole("button", { name: "Next page" }).click();
    await expect(table.getByRole("row").nth(1)).not.toContainText(firstOfPage);
    expected.push(...(await listed()));
  }
  expect(expected).toHaveLength(67);

  const [csv] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export CSV" }).click()]);
  expect(csv.suggestedFilename()).toBe("requests.csv");
  const lines = fs.readFileSync((await csv.path())!, "utf8").trimEnd().split("\r\n");
  expect(lines[0]).toMatch(/^requestId,workspace,state,/);
  expect(lines.slice(1).map((line) => line.split(",")[0])).toEqual(expected);

  const [jsonl] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export JSON Lines" }).click()]);
  const rows = fs.readFileSync((await jsonl.path())!, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as { requestId: string; state: string; workspace: string });
  expect(rows.map((row) => row.requestId)).toEqual(expected);
  expect(rows.every((row) => row.state === "failed" && row.workspace === "alpha")).toBe(true);
});
