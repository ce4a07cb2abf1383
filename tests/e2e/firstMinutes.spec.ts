import { aGenAiExport } from "../helpers/claudeCodeExports";
import { expect, test } from "./fixtures";

test("an address with no page answers 404 in the dashboard's style, with the ways back", async ({ page }) => {
  const response = await page.goto("/no/such/page");
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
  // The dashboard's own page under its header, not Next.js's default one.
  await expect(page.getByRole("navigation", { name: "Pages" })).toBeVisible();
  await expect(page.getByText("This page could not be found")).toHaveCount(0);
  await page.getByRole("main").getByRole("link", { name: "requests" }).click();
  await expect(page).toHaveURL(/\/requests$/);

  await page.goto("/requests/gone-for-good");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Request not found");
  await page.getByRole("link", { name: "Back to the requests" }).click();
  await expect(page).toHaveURL(/\/requests$/);
});

test("an empty folder's overview leads with what to do next, and it goes when the first request arrives", async ({ page, tracker }) => {
  await page.goto("/");
  const lead = page.getByRole("main").getByRole("status");
  await expect(lead).toContainText("No requests yet");
  // First after the title: before the counts and the charts.
  const order = await page.evaluate(() => {
    const main = document.querySelector("main")!;
    const status = main.querySelector('[role="status"]')!;
    const counts = main.querySelector('[aria-label="Requests by state"]')!;
    return status.compareDocumentPosition(counts) & Node.DOCUMENT_POSITION_FOLLOWING ? "lead first" : "counts first";
  });
  expect(order).toBe("lead first");
  tracker.create({ requestId: "first", workspace: "gateway", state: "queued" });
  await expect(page.getByRole("table", { name: "Recent requests" }).getByRole("row", { name: /first/ })).toBeVisible();
  await expect(page.getByText("No requests yet")).toHaveCount(0);
});

test("a dialog's buttons say what they do: cancel the request, or keep it", async ({ page, tracker }) => {
  tracker.create({ requestId: "waiting", workspace: "gateway", state: "queued" });
  await page.goto("/requests/waiting");
  await page.getByRole("button", { name: "Cancel request" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("1 of 1 matching request would be cancelled");
  await expect(dialog.getByRole("button")).toHaveText(["Cancel 1 request", "Don't cancel"]);
  await dialog.getByRole("button", { name: "Don't cancel" }).click();
  await expect(dialog).toHaveCount(0);
  expect(tracker.get("waiting")?.state).toBe("queued");
});

/**
 * What sticks out past the viewport's right edge on the page shown: the document itself, any
 * button, link or field, and any table cell (the newest time, the row's actions), named for the
 * failure; a table wider than its box with its columns' widths.
 */
function sideways(): string[] {
  const width = document.documentElement.clientWidth;
  const out: string[] = [];
  if (document.documentElement.scrollWidth > width) out.push(`the document is ${document.documentElement.scrollWidth} px wide`);
  for (const table of document.querySelectorAll("table")) {
    if (table.scrollWidth <= table.parentElement!.clientWidth) continue;
    const columns = [...table.querySelectorAll("th")].map((th) => `${th.textContent || "(no name)"} ${Math.round(th.getBoundingClientRect().width)}`);
    out.push(`table "${table.getAttribute("aria-label")}" is ${table.scrollWidth} px in ${table.parentElement!.clientWidth} px: ${columns.join(", ")}`);
  }
  for (const element of document.querySelectorAll("body button, body a, body input, body select, body td")) {
    const box = element.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (box.right > width + 0.5)
      out.push(
        `${element.tagName.toLowerCase()} "${(element.getAttribute("aria-label") ?? element.textContent ?? "").trim().slice(0, 40)}" ends at ${Math.round(box.right)} px`,
      );
  }
  return out;
}

/** The receiver's address, once it listens (the app asks for any free port). */
async function receiverOf(url: string): Promise<string> {
  let receiver: string | null = null;
  await expect
    .poll(async () => {
      const health = (await (await fetch(`${url}/api/health`)).json()) as { telemetry?: { receiver?: { url?: string | null } } };
      receiver = health.telemetry?.receiver?.url ?? null;
      return receiver;
    })
    .not.toBeNull();
  return receiver!;
}

test.describe("every page at 1280 px and up", () => {
  test.use({ appEnv: { REQWATCH_OTLP_PORT: "0", REQWATCH_QUEUED_STUCK_AFTER: "1s", REQWATCH_MONITOR_INTERVAL: "500ms" } });

  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 1400, height: 900 },
  ]) {
    test(`at ${viewport.width} px every page's row actions and newest times are in view, without scrolling sideways`, async ({
      page,
      tracker,
      app,
      operator,
    }) => {
      await page.setViewportSize(viewport);
      // Ids, sessions and models as long as real ones; failed (Retry), stuck (Cancel), a paused queue, a worker, a recorded session, a received one.
      const started = tracker.sessions.start();
      if (!started.ok) throw new Error(started.error.message);
      const sessionId = started.value.session.session_id;
      tracker.sessions.recordCommand({
        command: "add authentication to the public API and its tests",
        workflow: "complete_system",
        durationSeconds: 420,
        status: "completed",
      });
      tracker.sessions.recordFile({ path: "src/authentication/middleware/validateBearerToken.ts", summary: "Added JWT validation" });
      tracker.sessions.updateSnapshot({
        activeTask: "Building the authentication system",
        completedSteps: ["Created auth middleware"],
        nextSteps: ["Add refresh tokens"],
      });
      const failed: string[] = [];
      for (let i = 0; i < 6; i++) {
        const request = tracker.create({
          requestId: crypto.randomUUID(),
          workspace: `gateway-${i % 3}-production`,
          state: "queued",
          sessionId: i < 3 ? sessionId : crypto.randomUUID(),
          model: "claude-sonnet-4-5-20250929",
          prompt: `question ${i}`,
        });
        const claimed = tracker.claimNext({ workspace: request.workspace, worker: "summarizer-worker-production-7f9c" })!;
        tracker.fail(claimed.request.requestId, claimed.token, "model overloaded", { retryable: false });
        failed.push(request.requestId);
      }
      tracker.create({
        requestId: crypto.randomUUID(),
        workspace: "nightly-batch-production",
        state: "queued",
        sessionId,
        model: "claude-sonnet-4-5-20250929",
      });
      tracker.create({ requestId: crypto.randomUUID(), workspace: "gateway-2-production", state: "queued" });
      operator.pause("gateway-2-production", { by: "dashboard", reason: "provider down since the morning deploy" });
      const conversation = "support.team:conversation 7f9c-4e1b";
      const sent = await fetch(`${await receiverOf(app.url)}/v1/traces`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(aGenAiExport(conversation, Date.now(), "support-bot-production")),
      });
      expect(sent.status).toBe(200);

      const pages: [string, string | RegExp][] = [
        ["/", "Overview"],
        ["/requests", "Requests"],
        [`/requests/${failed[0]}`, failed[0]!],
        ["/sessions", "Sessions"],
        [`/sessions/${sessionId}`, sessionId],
        ["/workers", "Workers"],
        ["/audit", "Audit"],
        ["/health", "Health"],
        ["/no/such/page", "Page not found"],
      ];
      for (const [path, heading] of pages) {
        await page.goto(path);
        await expect(page.getByRole("heading", { level: 1 })).toContainText(heading);
        expect.soft(await page.evaluate(sideways), path).toEqual([]);
      }

      // What a person acts on: each failed row's Retry, the stuck one's Cancel.
      await page.goto("/requests");
      await expect(page.getByRole("table", { name: "Requests" }).getByRole("button", { name: /^Cancel / })).toBeVisible();
      expect.soft(await page.evaluate(sideways), "/requests with a stuck row").toEqual([]);

      // A received session, from the sessions list; and one of its rows' own page (a source row).
      await page.goto("/sessions");
      await page.getByRole("table", { name: "Sessions" }).getByRole("link", { name: "support_team_conversation_7f9c-4e1b" }).click();
      await expect(page.getByRole("heading", { level: 1 })).toContainText("support_team_conversation_7f9c-4e1b");
      await expect(page.getByRole("table", { name: "Session requests" })).toBeVisible();
      expect.soft(await page.evaluate(sideways), "a received session").toEqual([]);
      await page
        .getByRole("table", { name: "Session requests" })
        .getByRole("link", { name: /^call-\d+$/ })
        .click();
      await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
      expect.soft(await page.evaluate(sideways), "a source row").toEqual([]);
    });
  }
});

test.describe("a received session's id with other characters", () => {
  test.use({ appEnv: { REQWATCH_OTLP_PORT: "0" } });

  test("Health's by-session usage links to its page; a cost its client did not say reads as estimated, with the price table on hover, there and on the page", async ({
    page,
    app,
  }) => {
    const sent = await fetch(`${await receiverOf(app.url)}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(aGenAiExport("support.team:conversation 1", Date.now())),
    });
    expect(sent.status).toBe(200);
    await page.goto("/health");
    const row = page.getByRole("table", { name: "Tokens and cost by session" }).getByRole("row").nth(1);
    await expect(row.getByRole("cell").nth(9)).toHaveText("$0.0001 estimated");
    await expect(row.getByRole("cell").nth(9)).toHaveAttribute("title", /estimated at list prices \(genai-prices [\d.]+, published \d{4}-\d{2}-\d{2}\)/);
    await row.getByRole("link", { name: "support_team_conversation_1" }).click();
    await expect(page.getByRole("heading", { level: 1 })).toContainText("Session support_team_conversation_1");
    await expect(page.getByLabel("Session figures")).toContainText("Cost$0.0001 estimatedGoing on");
  });
});

test.describe("one figure, one moment", () => {
  test.use({ appEnv: { REQWATCH_QUEUED_STUCK_AFTER: "1s", REQWATCH_MONITOR_INTERVAL: "500ms" } });

  test("Health's stuck count is the header's, as the requests cross the threshold", async ({ page, tracker }) => {
    await page.goto("/health");
    await expect(page.getByLabel("Thresholds")).toContainText("queued stuck after 1s (REQWATCH_QUEUED_STUCK_AFTER)");
    const badge = page.getByRole("link", { name: /^\d+ stuck$/ });
    const count = page.getByLabel("Stuck count");
    for (let i = 1; i <= 3; i++) {
      tracker.create({ requestId: `waiting-${i}`, workspace: "nightly", state: "queued" });
      await expect(badge).toHaveText(`${i} stuck`);
      await expect(count).toHaveText(String(i));
    }
  });
});

test("the last hour says why its latency's n is not the number finished", async ({ page, tracker, operator }) => {
  tracker.create({ requestId: "served", workspace: "gateway", state: "queued" });
  const claim = tracker.claimNext({ workspace: "gateway" })!;
  tracker.complete("served", claim.token, { output: "ok" });
  tracker.create({ requestId: "never-taken", workspace: "gateway", state: "queued" });
  operator.cancel(["never-taken"]);
  await page.goto("/");
  const lastHour = page.getByRole("region", { name: "Last hour" });
  await expect(lastHour).toContainText("2 requests finished");
  await expect(
    page
      .getByRole("table", { name: "Latency" })
      .getByRole("row", { name: /Queue wait/ })
      .getByRole("cell")
      .last(),
  ).toHaveText("1");
  await expect(lastHour).toContainText("n: 1 finished without a wait to measure (cancelled before a worker took it, or written without one).");
});

test("opening Clean up… puts its form on a line of its own: the action bar stays one line", async ({ page, tracker }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  tracker.create({ requestId: "any", workspace: "gateway", state: "queued" });
  await page.goto("/requests");
  const top = async (role: "button" | "link", name: string) => (await page.getByRole(role, { name }).boundingBox())!.y;
  const before = [await top("button", "Retry all matching"), await top("link", "Export CSV")];
  await page.getByRole("button", { name: "Clean up…" }).click();
  await expect(page.getByRole("form", { name: "Clean up" })).toBeVisible();
  // Same line as before (a pixel's shift aside) and as each other.
  const after = [await top("button", "Retry all matching"), await top("link", "Export CSV")];
  expect(Math.abs(after[0]! - before[0]!)).toBeLessThan(2);
  expect(Math.abs(after[1]! - after[0]!)).toBeLessThan(2);
  const form = (await page.getByRole("form", { name: "Clean up" }).boundingBox())!;
  expect(form.y).toBeGreaterThan(before[0]!);
});
