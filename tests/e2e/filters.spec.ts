import { expect, test } from "./fixtures";

test("text filters apply as you type, by prefix, with the known workspaces and sessions suggested; the URL follows and leads", async ({ page, tracker }) => {
  for (const [workspace, count, sessionId] of [
    ["batch", 3, "s-alpha"],
    ["batch-nightly", 2, "s-beta"],
    ["chat", 2, "s-alpha"],
  ] as const) {
    for (let i = 0; i < count; i++) tracker.create({ requestId: `${workspace}-${i}`, workspace, sessionId, state: "queued" });
  }
  // The page's clock is the test's to move (it flows as usual until moved).
  await page.clock.install();
  await page.goto("/requests");
  const filters = page.getByRole("form", { name: "Filters" });
  const table = page.getByRole("table", { name: "Requests" });
  const ids = async () =>
    (await table.getByRole("row").allInnerTexts())
      .slice(1)
      .map((text) => text.trim().split(/\s+/)[0])
      .sort();
  await expect(filters).toContainText("apply as you type");
  await expect(table.getByRole("row")).toHaveCount(8);

  // No Enter, no leaving the field: a pause in typing applies it.
  const workspace = filters.getByLabel("Workspace");
  await workspace.pressSequentially("bat", { delay: 50 });
  await expect.poll(ids).toEqual(["batch-0", "batch-1", "batch-2", "batch-nightly-0", "batch-nightly-1"]);
  await expect(page).toHaveURL(/[?&]workspacePrefix=bat(&|$)/);
  await expect(workspace).toBeFocused();
  await expect(page.locator("#workspace-values option")).toHaveCount(2);
  expect(await page.locator("#workspace-values option").evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value))).toEqual([
    "batch",
    "batch-nightly",
  ]);

  await workspace.pressSequentially("ch-", { delay: 50 });
  await expect.poll(ids).toEqual(["batch-nightly-0", "batch-nightly-1"]);

  await workspace.fill("");
  const session = filters.getByLabel("Session");
  await session.pressSequentially("s-al", { delay: 50 });
  await expect.poll(ids).toEqual(["batch-0", "batch-1", "batch-2", "chat-0", "chat-1"]);
  expect(await page.locator("#session-values option").evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value))).toEqual([
    "s-alpha",
  ]);

  // A character no workspace can hold is not applied: the box says so, and the view stays as it was.
  const urls: string[] = [];
  page.on("framenavigated", (frame) => frame === page.mainFrame() && urls.push(frame.url()));
  await session.fill("");
  await workspace.fill("batch?");
  await expect(filters.getByRole("alert")).toHaveText("letters, digits, _ or - only");
  // Past the pause in typing, on the page's clock: whatever it would apply is under way.
  await page.clock.runFor(5000);
  await expect(workspace).toHaveValue("batch?");
  await workspace.fill("batch");
  await expect(filters.getByRole("alert")).toHaveCount(0);
  await expect.poll(ids).toEqual(["batch-0", "batch-1", "batch-2", "batch-nightly-0", "batch-nightly-1"]);
  await expect(page).toHaveURL(/[?&]workspacePrefix=batch(&|$)/);
  // The view went from the last good filter to this one: the bad one was never a URL.
  expect(urls.filter((url) => /batch(%3F|\?)/i.test(url))).toEqual([]);

  // The URL leads too: opened with a filter, the inputs show it. A link's workspace is exact.
  await page.goto("/requests?workspacePrefix=ch");
  await expect(filters.getByLabel("Workspace")).toHaveValue("ch");
  await expect.poll(ids).toEqual(["chat-0", "chat-1"]);
  await page.goto("/requests?workspace=batch");
  await expect(filters.getByLabel("Workspace")).toHaveValue("batch");
  await expect.poll(ids).toEqual(["batch-0", "batch-1", "batch-2"]);
});
