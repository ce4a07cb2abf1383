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
  const lines = fs
    .readFileSync((await csv.path())!, "utf8")
    .trimEnd()
    .split("\r\n");
  expect(lines[0]).toMatch(/^requestId,workspace,state,/);
  expect(lines.slice(1).map((line) => line.split(",")[0])).toEqual(expected);

  const [jsonl] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export JSON Lines" }).click()]);
  const rows = fs
    .readFileSync((await jsonl.path())!, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as { requestId: string; state: string; workspace: string });
  expect(rows.map((row) => row.requestId)).toEqual(expected);
  expect(rows.every((row) => row.state === "failed" && row.workspace === "alpha")).toBe(true);
});

test("a request's page exports the whole request as JSON, its long output included", async ({ page, tracker }) => {
  const output = "line of output\n".repeat(20_000);
  tracker.create({ requestId: "exported", workspace: "alpha", state: "processing", prompt: "summarise" });
  tracker.transition("exported", "completed", { fields: { output, tokens: 42 } });

  await page.goto("/requests/exported");
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export JSON" }).click()]);
  expect(download.suggestedFilename()).toBe("exported.json");
  const exported = JSON.parse(fs.readFileSync((await download.path())!, "utf8")) as Record<string, unknown>;
  expect(exported).toEqual(JSON.parse(JSON.stringify(tracker.get("exported"))));
  expect(exported).toMatchObject({ requestId: "exported", state: "completed", output, tokens: 42, prompt: "summarise" });
});
