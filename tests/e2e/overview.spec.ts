import fs from "node:fs";
import { expect, test } from "./fixtures";

test("the first page shows the count per state and the most recently updated requests", async ({ page, tracker }) => {
  tracker.create({ requestId: "req-queued", workspace: "gateway", state: "queued", model: "sonnet", sessionId: "sess-1" });
  tracker.create({ requestId: "req-done", workspace: "gateway", state: "processing", model: "opus" });
  tracker.transition("req-done", "completed", { fields: { tokens: 1234 } });
  tracker.create({ requestId: "req-broken", workspace: "worker", state: "processing" });
  tracker.transition("req-broken", "failed", { fields: { error: "<script>alert(1)</script>" } });

  await page.goto("/");

  const counts = page.getByRole("list", { name: "Requests by state" });
  await expect(counts.getByRole("listitem", { name: "queued: 1" })).toBeVisible();
  await expect(counts.getByRole("listitem", { name: "completed: 1" })).toBeVisible();
  await expect(counts.getByRole("listitem", { name: "failed: 1" })).toBeVisible();
  await expect(counts.getByRole("listitem", { name: "processing: 0" })).toBeVisible();

  const table = page.getByRole("table", { name: "Recent requests" });
  const rows = table.getByRole("row");
  await expect(rows).toHaveCount(4);
  // Newest update first.
  await expect(rows.nth(1)).toContainText("req-broken");
  await expect(rows.nth(2)).toContainText("req-done");
  await expect(rows.nth(3)).toContainText("req-queued");
  await expect(table.getByRole("row", { name: /req-done/ })).toContainText("completed");
  await expect(table.getByRole("row", { name: /req-done/ })).toContainText("1234");
  await expect(table.getByRole("row", { name: /req-queued/ })).toContainText("sess-1");
});

test("it shows a request written after the page was opened, without a reload", async ({ page, tracker }) => {
  await page.goto("/");
  await expect(page.getByRole("main").getByRole("status")).toContainText("No requests yet");
  await expect(page.getByRole("main").getByRole("status")).toContainText("REQWATCH_STATE_DIR");

  tracker.create({ requestId: "late-arrival", workspace: "gateway", state: "queued" });

  await expect(page.getByRole("table", { name: "Recent requests" }).getByRole("row", { name: /late-arrival/ })).toBeVisible();
  await expect(page.getByRole("listitem", { name: "queued: 1" })).toBeVisible();
});

test("a request written while the page was still opening its event stream shows too", async ({ page, tracker }) => {
  tracker.create({ requestId: "before-the-page", workspace: "gateway", state: "queued" });
  // The stream is held back until a request has been written after the page was rendered.
  let release!: () => void;
  const written = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/api/events*", async (route) => {
    await written;
    await route.continue();
  });
  await page.goto("/");
  const recent = page.getByRole("table", { name: "Recent requests" });
  await expect(recent.getByRole("row", { name: /before-the-page/ })).toBeVisible();
  tracker.create({ requestId: "in-the-gap", workspace: "gateway", state: "queued" });
  release();

  await expect(recent.getByRole("row", { name: /in-the-gap/ })).toBeVisible();
  await expect(page.getByRole("listitem", { name: "queued: 2" })).toBeVisible();
});

test("only the 50 most recently updated requests are listed", async ({ page, tracker }) => {
  for (let i = 0; i < 55; i++) tracker.create({ requestId: `bulk-${String(i).padStart(2, "0")}`, workspace: "bulk" });

  await page.goto("/");

  await expect(page.getByRole("listitem", { name: "created: 55" })).toBeVisible();
  const rows = page.getByRole("table", { name: "Recent requests" }).getByRole("row");
  await expect(rows).toHaveCount(51);
  await expect(rows.nth(1)).toContainText("bulk-54");
  await expect(page.getByRole("row", { name: /bulk-04/ })).toHaveCount(0);
});

test("an unreadable file is reported and the other requests still show", async ({ page, stateDir, tracker, operator }) => {
  tracker.create({ requestId: "healthy", workspace: "gateway" });
  fs.writeFileSync(`${stateDir}/requests/mangled.json`, '{"requestId": "mangled", "state": ');
  // Until the watcher lands, a file written behind the tracker's back is found by recovery (`reqwatch recover`).
  operator.recover();

  await page.goto("/");

  await expect(page.getByText(/could not be read/)).toContainText("requests/mangled.json (invalid JSON");
  await expect(page.getByRole("row", { name: /healthy/ })).toBeVisible();
});

test("the last hour and the recent failures follow new requests without a reload", async ({ page, tracker }) => {
  await page.goto("/");
  const lastHour = page.getByRole("region", { name: "Last hour" });
  await expect(lastHour).toContainText("No request finished");
  await expect(page.getByRole("region", { name: "Recent failures" })).toContainText("No failures.");

  tracker.create({ requestId: "ok-1", workspace: "live", state: "processing" });
  tracker.transition("ok-1", "completed");
  tracker.create({ requestId: "bad-1", workspace: "live", state: "processing" });
  tracker.transition("bad-1", "failed", { fields: { error: "provider returned 529" } });

  await expect(lastHour).toContainText(/2 requests finished .*1 completed, 1 failed|2 requests finished .*1 failed, 1 completed/);
  await expect(
    lastHour
      .getByRole("table", { name: "Latency" })
      .getByRole("row", { name: /Processing/ })
      .getByRole("cell")
      .last(),
  ).toHaveText("2");
  const failure = page.getByRole("table", { name: "Recent failures" }).getByRole("row", { name: /bad-1/ });
  await expect(failure).toContainText("provider returned 529");
  await expect(failure).toContainText(/\ds ago/);
});

test("long names and an unbroken error stay inside the window: wrapped, or cut with the whole in a tooltip", async ({ page, tracker, operator }) => {
  const workspace = "batch-nightly-very-long-workspace-name-for-the-reports-team";
  const model = "claude-sonnet-4-5-20250929-with-a-long-deployment-suffix";
  const token = "averyverylongunbrokenerrortoken".repeat(6);
  tracker.create({ requestId: `req-${"a".repeat(60)}`, workspace, state: "processing", model });
  tracker.transition(`req-${"a".repeat(60)}`, "failed", { fields: { error: `HTTP 500 from upstream: ${token}` } });
  for (let i = 0; i < 3; i++) tracker.create({ requestId: `other-${i}`, workspace: "gateway", state: "queued", model });
  operator.pause(workspace, { by: "test", reason: `a reason as long as a paragraph, ${"with many words ".repeat(8)}` });

  for (const width of [1400, 800]) {
    await page.setViewportSize({ width, height: 900 });
    for (const url of ["/", "/requests"]) {
      await page.goto(url);
      const table = page.getByRole("table", { name: url === "/" ? "Recent requests" : "Requests" });
      await expect(table.getByRole("row", { name: /req-a+/ })).toBeVisible();
      // Nothing makes the page wider than the window: the header, the queues, the tables.
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${url} at ${width} px`).toBeLessThanOrEqual(width);
      // A cut name keeps the whole in its title.
      await expect(table.getByRole("cell", { name: workspace })).toHaveAttribute("title", workspace);
      await expect(table.getByRole("cell", { name: model }).first()).toHaveAttribute("title", model);
    }
    await page.goto("/");
    await expect(page.getByRole("table", { name: "Queues" }).getByRole("cell", { name: workspace, exact: true })).toHaveAttribute("title", workspace);
    // The error wraps inside its cell, readable, and its age stays beside it, not drawn over it.
    const failure = page.getByRole("table", { name: "Recent failures" }).getByRole("row");
    await expect(failure).toContainText(token.slice(0, 100));
    const [error, age] = [failure.getByRole("cell").nth(2), failure.getByRole("cell").nth(3)];
    const [errorBox, ageBox] = [await error.boundingBox(), await age.boundingBox()];
    expect(errorBox!.x + errorBox!.width).toBeLessThanOrEqual(ageBox!.x + 1);
    expect(errorBox!.width, `the error's width at ${width} px`).toBeGreaterThanOrEqual(150);
    expect(ageBox!.x + ageBox!.width, `the age within the window at ${width} px`).toBeLessThanOrEqual(width);
  }
});

test("times that tick between the server's render and the browser's takeover raise no hydration error", async ({ page, tracker }) => {
  tracker.create({ requestId: "broke", workspace: "gateway", state: "processing" });
  tracker.transition("broke", "failed", { fields: { error: "HTTP 502" } });
  await page.goto("/");
  await expect(page.getByLabel("Retention")).toContainText("Last ran");
  // The browser takes the page over more than a second after the server rendered it: every "ago" has ticked.
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
  await page.route(/\/_next\/static\/chunks\/.*\.js$/, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await route.continue();
  });
  await page.goto("/");
  // Taken over: the 1h/24h/7d buttons answer.
  await page.getByRole("button", { name: "24h" }).click();
  await expect(page.getByRole("button", { name: "24h" })).toHaveAttribute("aria-pressed", "true");
  expect(errors.filter((text) => /418|hydrat/i.test(text))).toEqual([]);
});

test("the state cards and the chart's caption count the same requests whenever they are read, while requests change", async ({ page, tracker, reader }) => {
  await page.goto("/");
  await expect(page.getByLabel("Requests by state at the point shown")).toContainText("now");
  // Both read in one go, as a person sees them at one moment.
  const shown = () =>
    page.evaluate(() => {
      const caption = document.querySelector('[aria-label="Requests by state at the point shown"]')?.textContent ?? "";
      return ["queued", "processing", "created"].map((state) => ({
        state,
        card: document.querySelector(`[aria-label="Requests by state"] [aria-label^="${state}: "]`)?.getAttribute("aria-label")?.split(": ")[1],
        caption: new RegExp(`${state} (\\d+)`).exec(caption)?.[1],
      }));
    });
  for (let i = 0; i < 30; i++) {
    tracker.create({ requestId: `r-${i}`, workspace: "gateway", state: i % 4 === 0 ? "created" : "queued" });
    if (i % 3 === 2) tracker.claimNext();
    await new Promise((resolve) => setTimeout(resolve, 60));
    for (const { state, card, caption } of await shown()) expect(caption, `${state}, read after ${i + 1} writes`).toBe(card);
  }
  const counts = reader.countsByState();
  await expect
    .poll(shown)
    .toEqual(
      ["queued", "processing", "created"].map((state) => ({ state, card: String(counts[state as "queued"]), caption: String(counts[state as "queued"]) })),
    );
});
