import { aClaudeMemWorker } from "../helpers/claudeMemWorker";
import { expect, test } from "./fixtures";

// claude-mem 13.25.3's real worker (tests/helpers/claudeMemWorker.ts), holding what its hooks sent in
// its memory, with the dashboard reading it as a source; then killed, as a crash would.
test("claude-mem 13: the worker's in-memory queue as a row, live; the worker killed, the row says the work was lost; the Health page says the worker is down", async ({
  page,
  launchApp,
}) => {
  test.setTimeout(120_000);
  const worker = await aClaudeMemWorker();
  try {
    await worker.observe("session-1", 3);
    const { url } = await launchApp({ REQWATCH_SOURCES: `claude-mem:${worker.database}` });

    await page.goto(`${url}/health`);
    const sources = page.getByRole("table", { name: "Sources" });
    await expect(sources.getByTestId("worker-line")).toContainText(`claude-mem 13.25.3's worker (pid ${worker.pid}) on ${worker.url}: 3 observations queued`);
    await expect(sources.getByTestId("worker-line")).toContainText("degraded: claude_cli");

    await page.goto(`${url}/requests?source=claude-mem`);
    await expect(page.getByTestId("source-line")).toContainText("claude-mem's queue, which its worker keeps in memory, as reqwatch saw it");
    const table = page.getByRole("table", { name: "Requests" });
    const row = table.getByRole("row").filter({ hasText: "claude-mem-queue-" });
    await expect(row).toHaveCount(1);
    await expect(row).toContainText("3 waiting");
    await expect(row).toContainText(/queued|processing/);

    // A crash of the worker: the page, still open, shows what it cost.
    await worker.kill("SIGKILL");
    await expect(row).toContainText("failed");
    await row.getByRole("link", { name: /^claude-mem-queue-/ }).click();
    const lost = `claude-mem's worker (pid ${worker.pid}) stopped with 3 observations in its queue; claude-mem keeps the queue in memory, so they were lost`;
    await expect(page.locator("pre").filter({ hasText: lost })).toBeVisible();
    // What it did: the queue filled, then the worker stopped.
    const steps = page.getByRole("table", { name: "What it did" });
    await expect(steps.getByRole("row").nth(1)).toContainText("3 observations in the queue");
    await expect(steps.getByRole("row").last()).toContainText("worker stopped");
    await page.screenshot({ path: test.info().outputPath("claude-mem-13-lost.png"), fullPage: true });

    await page.goto(`${url}/health`);
    await expect(sources.getByTestId("worker-line")).toHaveText(
      `claude-mem's worker is not running: nothing answers on ${worker.url} (the port in ${worker.dataDir}/settings.json)`,
    );
  } finally {
    await worker.remove();
  }
});
