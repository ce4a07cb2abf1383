import { runCli } from "../helpers/cli";
import { runWorker } from "../../lib/worker/runWorker";
import { expect, test } from "./fixtures";

test("pause a workspace from the overview while a worker runs: it takes nothing from it, the rest go on; resume and it drains", async ({
  page,
  tracker,
  reader,
}) => {
  for (let i = 0; i < 3; i++) {
    tracker.create({ requestId: `batch-${i}`, workspace: "batch", state: "queued" });
    tracker.create({ requestId: `chat-${i}`, workspace: "chat", state: "queued" });
  }
  await page.goto("/");
  const queues = page.getByRole("table", { name: "Queues" });
  const row = (workspace: string) => queues.getByRole("row").filter({ has: page.getByRole("link", { name: workspace, exact: true }) });
  await expect(row("batch")).toContainText("waiting");

  await page.getByRole("button", { name: "Pause batch" }).click();
  await expect(row("batch")).toContainText("paused by dashboard");
  await expect(page.getByRole("link", { name: "Paused: batch" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Resume batch" })).toBeVisible();

  const worker = runWorker({ tracker, handler: () => ({ output: "done" }), pollIntervalMs: 50, handleSignals: false, onError: () => undefined });
  try {
    for (let i = 3; i < 5; i++) {
      tracker.create({ requestId: `batch-${i}`, workspace: "batch", state: "queued" });
      tracker.create({ requestId: `chat-${i}`, workspace: "chat", state: "queued" });
    }
    await expect.poll(() => reader.countsByState({ workspace: "chat" }).completed).toBe(5);
    // The other workspace drained while the paused one kept every request waiting.
    await expect(row("chat")).toHaveCount(0);
    await expect(row("batch").getByRole("cell").nth(1)).toHaveText("5");
    expect(reader.countsByState({ workspace: "batch" })).toMatchObject({ queued: 5, processing: 0, completed: 0 });

    await page.getByRole("button", { name: "Resume batch" }).click();
    await expect.poll(() => reader.countsByState({ workspace: "batch" }).completed).toBe(5);
    await expect(row("batch")).toHaveCount(0);
    await expect(page.getByRole("link", { name: /^Paused:/ })).toHaveCount(0);
  } finally {
    await worker.stop();
  }

  await page.getByRole("link", { name: "Audit" }).click();
  const log = page.getByRole("table", { name: "Audit log" });
  await expect(log.getByRole("row").filter({ hasText: "Pause workspace batch" })).toContainText("dashboard");
  await expect(log.getByRole("row").filter({ hasText: "Resume workspace batch" })).toContainText("dashboard");
});

test("a pause from the CLI shows in an open page at once; the requests page filtered to the workspace resumes it", async ({
  page,
  tracker,
  stateDir,
  reader,
}) => {
  tracker.create({ requestId: "waiting", workspace: "nightly", state: "queued" });
  await page.goto("/requests?workspace=nightly");
  await expect(page.getByRole("button", { name: "Pause nightly" })).toBeVisible();

  expect(runCli(["pause", "nightly", "--reason", "provider down"], { stateDir }).code).toBe(0);
  await expect(page.getByRole("link", { name: "Paused: nightly" })).toBeVisible();
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row").filter({ hasText: "waiting" })).toContainText(
    "paused: workspace nightly takes no claims until resumed",
  );
  await page.getByRole("button", { name: "Resume nightly" }).click();
  await expect(page.getByRole("link", { name: /^Paused:/ })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Pause nightly" })).toBeVisible();
  expect(reader.pauses()).toEqual([]);
  expect(tracker.claimNext()?.request.requestId).toBe("waiting");
});

test("the overview lists the queues by name as a person reads it: ws2 before ws10", async ({ page, tracker }) => {
  for (const workspace of ["ws10", "ws2", "ws1"]) tracker.create({ workspace, state: "queued" });
  await page.goto("/");
  await expect(page.getByRole("table", { name: "Queues" }).getByRole("link", { name: /^ws\d+$/ })).toHaveText(["ws1", "ws2", "ws10"]);
});
