import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { aClaimedRequest, aStuckProcessingRequest, aRequest, anOldCompletedRequest, writeRequestFile } from "../helpers/builders";
import { expect, test } from "./fixtures";

test("a request written by another process appears, and changes state, without a reload", async ({ page, tracker }) => {
  tracker.create({ requestId: "first", workspace: "gateway", state: "queued" });
  await page.goto("/requests");
  await expect(page.getByRole("status", { name: "Live status" })).toContainText("live");
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row", { name: /first/ })).toBeVisible();

  tracker.create({ requestId: "arrived-later", workspace: "gateway", state: "queued", model: "sonnet" });
  await expect(table.getByRole("row", { name: /arrived-later/ })).toContainText("queued");

  const claim = tracker.claimNext()!;
  tracker.complete(claim.request.requestId, claim.token, { fields: { tokens: 4321 } });
  await expect(table.getByRole("row", { name: new RegExp(claim.request.requestId) })).toContainText("completed");
  await expect(table.getByRole("row", { name: new RegExp(claim.request.requestId) })).toContainText("4321");
});

test("filters live in the URL and survive a reload", async ({ page, tracker }) => {
  tracker.create({ requestId: "a-failed", workspace: "alpha", state: "processing" });
  tracker.transition("a-failed", "failed", { fields: { error: "boom" } });
  tracker.create({ requestId: "b-failed", workspace: "beta", state: "processing" });
  tracker.transition("b-failed", "failed");
  tracker.create({ requestId: "a-queued", workspace: "alpha", state: "queued" });

  await page.goto("/requests");
  const filters = page.getByRole("form", { name: "Filters" });
  await filters.getByRole("checkbox", { name: "failed", exact: true }).check();
  await filters.getByLabel("Workspace").fill("alpha");
  await filters.getByLabel("Workspace").press("Enter");
  await expect(page).toHaveURL(/states=failed/);
  await expect(page).toHaveURL(/workspacePrefix=alpha/);
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row")).toHaveCount(2);
  await expect(table.getByRole("row", { name: /a-failed/ })).toBeVisible();

  await page.reload();
  await expect(filters.getByRole("checkbox", { name: "failed", exact: true })).toBeChecked();
  await expect(filters.getByLabel("Workspace")).toHaveValue("alpha");
  await expect(table.getByRole("row")).toHaveCount(2);
  await expect(table.getByRole("row", { name: /a-failed/ })).toBeVisible();
});

test("keyset pages: next and previous walk the table", async ({ page, tracker }) => {
  for (let i = 0; i < 60; i++) tracker.create({ requestId: `r-${String(i).padStart(2, "0")}`, workspace: "bulk" });
  await page.goto("/requests");
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row")).toHaveCount(51);
  await expect(table.getByRole("row").nth(1)).toContainText("r-59");
  await page.getByRole("button", { name: "Next page" }).click();
  await expect(table.getByRole("row")).toHaveCount(11);
  await expect(table.getByRole("row").nth(1)).toContainText("r-09");
  await page.getByRole("button", { name: "Previous page" }).click();
  await expect(table.getByRole("row").nth(1)).toContainText("r-59");
});

test.describe("stuck", () => {
  test.use({ appEnv: { REQWATCH_QUEUED_STUCK_AFTER: "1s", REQWATCH_MONITOR_INTERVAL: "250ms" } });

  test("a request crossing the stuck threshold raises the badge, and the filtered table says why", async ({ page, tracker }) => {
    await page.goto("/requests");
    const badge = page.getByRole("link", { name: /stuck/ });
    await expect(badge).toHaveText("0 stuck");

    tracker.create({ requestId: "waiting-too-long", workspace: "gateway", state: "queued" });
    await expect(badge).toHaveText("1 stuck", { timeout: 10_000 });
    await expect(badge).toHaveClass(/alert/);

    await badge.click();
    await expect(page).toHaveURL(/stuck=1/);
    const row = page.getByRole("table", { name: "Requests" }).getByRole("row", { name: /waiting-too-long/ });
    await expect(row).toContainText(/stuck: queued \d+s/);

    // Claimed: no longer stuck, and the badge goes back down without a reload.
    const claim = tracker.claimNext()!;
    tracker.complete(claim.request.requestId, claim.token);
    await expect(badge).toHaveText("0 stuck", { timeout: 10_000 });
  });
});

test("retry from the detail page sends a failed request back to queued, and a worker completes it", async ({ page, tracker }) => {
  tracker.create({ requestId: "flaky", workspace: "gateway", state: "queued", prompt: "do the thing" });
  const first = tracker.claimNext()!;
  tracker.fail("flaky", first.token, "upstream 503", { retryable: false });

  await page.goto("/requests/flaky");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("failed");
  await page.getByRole("button", { name: "Retry", exact: true }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("1 of 1 matching request would go back to queued (1 failed)");
  await dialog.getByRole("button", { name: "Retry 1" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 1 changed, 0 skipped.");
  await dialog.getByRole("button", { name: "Close" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("queued");
  expect(tracker.get("flaky")?.transitions?.at(-1)).toMatchObject({
    from: "failed",
    to: "queued",
    by: expect.stringMatching(/^dashboard \(action #\d+\)$/),
    manual: true,
  });

  const second = tracker.claimNext()!;
  expect(second.request.requestId).toBe("flaky");
  tracker.complete("flaky", second.token, { fields: { output: "done" } });
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
  await expect(page.getByRole("table", { name: "History" })).toContainText("manual");
  // The first attempt's error is that attempt's, in the history; the completed request shows none.
  await expect(page.getByRole("table", { name: "History" })).toContainText("error of this attempt: upstream 503");
  await expect(page.getByLabel("Error", { exact: true })).toHaveCount(0);
});

test("a bulk retry shows its dry run, then does what it showed", async ({ page, tracker, reader }) => {
  for (const id of ["f-1", "f-2", "f-3"]) {
    tracker.create({ requestId: id, workspace: "gateway", state: "processing" });
    tracker.transition(id, "failed", { fields: { error: "rate limited" } });
  }
  tracker.create({ requestId: "ok-1", workspace: "gateway", state: "processing" });
  tracker.transition("ok-1", "completed");

  await page.goto("/requests?states=completed,failed");
  await page.getByRole("button", { name: "Retry all matching" }).click();
  const dialog = page.getByRole("dialog");
  const dryRun = dialog.getByRole("region", { name: "Dry run" });
  await expect(dryRun).toContainText("3 of 4 matching requests would go back to queued (3 failed)");
  await expect(dryRun).toContainText("1 would be skipped: it is completed: nothing to retry");
  await expect(dryRun).toContainText(/f-1|f-2|f-3/);
  expect(reader.countsByState().failed).toBe(3);

  await dialog.getByRole("button", { name: "Retry 3" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 3 changed, 1 skipped.");
  await expect(dialog.getByRole("status")).toContainText("1 skipped: it is completed: nothing to retry");
  expect(reader.countsByState()).toMatchObject({ failed: 0, queued: 3, completed: 1 });
  await dialog.getByRole("button", { name: "Close" }).click();
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row")).toHaveCount(2);
});

test("retry of selected rows acts on those rows only", async ({ page, tracker }) => {
  for (const id of ["s-1", "s-2", "s-3"]) {
    tracker.create({ requestId: id, workspace: "gateway", state: "processing" });
    tracker.transition(id, "timeout");
  }
  await page.goto("/requests?states=timeout");
  await page.getByRole("checkbox", { name: "Select s-1" }).check();
  await page.getByRole("checkbox", { name: "Select s-3" }).check();
  await page.getByRole("button", { name: "Retry selected (2)" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("2 of 2 matching requests would go back to queued (2 timeout)");
  await dialog.getByRole("button", { name: "Retry 2" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 2 changed");
  expect([tracker.get("s-1")?.state, tracker.get("s-2")?.state, tracker.get("s-3")?.state]).toEqual(["queued", "timeout", "queued"]);
});

test("cleanup with a dry run, then undo from the audit page", async ({ page, stateDir, launchApp }) => {
  writeRequestFile(stateDir, anOldCompletedRequest("old-1"));
  writeRequestFile(stateDir, anOldCompletedRequest("old-2"));
  writeRequestFile(stateDir, aRequest({ requestId: "recent", state: "completed" }));
  // A person's cleanup of what the monitor's retention would otherwise take itself (retention.spec.ts).
  const { url } = await launchApp({ REQWATCH_RETENTION: "off" });

  await page.goto(`${url}/requests`);
  await page.getByRole("button", { name: "Clean up…" }).click();
  const form = page.getByRole("form", { name: "Clean up" });
  await form.getByLabel("Not updated for").selectOption("24h");
  await form.getByRole("button", { name: "Dry run" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("2 of 2 matching requests would be archived and removed (2 completed)");
  expect(fs.existsSync(`${stateDir}/requests/old-1.json`)).toBe(true);
  await dialog.getByRole("button", { name: "Clean up 2" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 2 changed, 0 skipped.");
  expect(fs.existsSync(`${stateDir}/requests/old-1.json`)).toBe(false);
  await dialog.getByRole("link", { name: "See the audit log" }).click();

  const audit = page.getByRole("table", { name: "Audit log" });
  const entry = audit.getByRole("row").filter({ hasText: "Clean up completed, failed, timeout requests not updated for 1d" }).filter({ hasNotText: "Undo #" });
  await expect(entry).toContainText("done");
  // The entry lists the requests it changed.
  await entry.getByText("2 changed").click();
  await expect(entry.getByRole("list", { name: "Changed requests" }).getByRole("link")).toHaveText(["old-1", "old-2"]);
  // Undo asks first, with its own dry run; until it is confirmed nothing runs, and its button says so.
  await entry.getByRole("button", { name: /Undo/ }).click();
  const undo = page.getByRole("dialog");
  await expect(undo.getByRole("region", { name: "Dry run" })).toContainText("2 of 2 matching requests would be restored from the archive");
  await expect(entry.getByRole("button", { name: /Undo/ })).toHaveText("Undo");
  await expect(entry.getByRole("button", { name: /Undo/ })).toBeEnabled();
  await expect(undo.getByRole("button")).toHaveText(["Restore 2 requests", "Don't restore"]);
  expect(fs.existsSync(`${stateDir}/requests/old-1.json`)).toBe(false);
  await undo.getByRole("button", { name: "Restore 2" }).click();
  await expect(undo.getByRole("status")).toContainText("Done: 2 changed, 0 skipped.");
  await undo.getByRole("button", { name: "Close" }).click();
  await expect(entry).toContainText(/undone by #\d+/);
  await expect(audit.getByRole("row", { name: /Undo #\d+/ })).toContainText("done");
  expect(fs.existsSync(`${stateDir}/requests/old-1.json`)).toBe(true);
  expect(fs.existsSync(`${stateDir}/requests/old-2.json`)).toBe(true);

  await page.goto(`${url}/requests/old-1`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
});

test("retry all matching says what it will do: how many, matching which filter, the same count on its button, a few ids and how many more; the audit log says the same", async ({
  page,
  tracker,
}) => {
  for (let i = 1; i <= 12; i++) {
    const id = `f-${String(i).padStart(2, "0")}`;
    tracker.create({ requestId: id, workspace: "gateway", state: "processing" });
    tracker.transition(id, "failed");
  }
  tracker.create({ requestId: "elsewhere", workspace: "billing", state: "processing" });
  tracker.transition("elsewhere", "failed");
  await page.goto("/requests?states=failed&workspace=gateway");
  await page.getByRole("button", { name: "Retry all matching" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("heading")).toHaveText("Retry 12 requests matching failed in gateway");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText(/f-\d\d, f-\d\d, f-\d\d and 9 more/);
  await dialog.getByRole("button", { name: "Retry 12 requests" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 12 changed, 0 skipped.");
  await dialog.getByRole("link", { name: "See the audit log" }).click();
  await expect(page.getByRole("table", { name: "Audit log" }).getByRole("row").nth(1)).toContainText("Retry 12 requests matching failed in gateway");
  expect(tracker.get("elsewhere")?.state).toBe("failed");
});

test.describe("row actions", () => {
  // A queued request is offered Cancel once it is stuck.
  test.use({ appEnv: { REQWATCH_QUEUED_STUCK_AFTER: "1s", REQWATCH_MONITOR_INTERVAL: "250ms" } });

  test("a row's Retry and Cancel name their request, in the dialog and in the audit log", async ({ page, tracker }) => {
    tracker.create({ requestId: "req-42", workspace: "gateway", state: "processing" });
    tracker.transition("req-42", "failed");
    tracker.create({ requestId: "req-43", workspace: "gateway", state: "queued" });
    await page.goto("/requests");
    const table = page.getByRole("table", { name: "Requests" });
    const dialog = page.getByRole("dialog");
    await table.getByRole("button", { name: "Retry req-42" }).click();
    await expect(dialog.getByRole("heading")).toHaveText("Retry req-42");
    await dialog.getByRole("button", { name: "Retry 1 request" }).click();
    await expect(dialog.getByRole("status")).toContainText("Done: 1 changed");
    await dialog.getByRole("button", { name: "Close" }).click();
    await table.getByRole("button", { name: "Cancel req-43" }).click();
    await expect(dialog.getByRole("heading")).toHaveText("Cancel req-43");
    await dialog.getByRole("button", { name: "Cancel 1 request" }).click();
    await expect(dialog.getByRole("status")).toContainText("Done: 1 changed");
    await page.goto("/audit");
    const audit = page.getByRole("table", { name: "Audit log" });
    await expect(audit.getByRole("row").nth(1)).toContainText("Cancel req-43");
    await expect(audit.getByRole("row").nth(2)).toContainText("Retry req-42");
  });
});

test("after a cleanup and its undo, a restored request shows and sorts by its own last update, not the restore's; its history says when it was restored", async ({
  page,
  stateDir,
  launchApp,
}) => {
  writeRequestFile(stateDir, anOldCompletedRequest("old-1"));
  writeRequestFile(stateDir, aRequest({ requestId: "recent", state: "completed", lastUpdatedAt: Date.now() - 60 * 60_000 }));
  const { url } = await launchApp({ REQWATCH_RETENTION: "off" });
  await page.goto(`${url}/requests`);
  const table = page.getByRole("table", { name: "Requests" });
  const updated = table.getByRole("row", { name: /old-1/ }).getByText("1d 1h ago");
  const exactly = await updated.getAttribute("title");
  expect(exactly).toMatch(/^\d{4}-\d\d-\d\dT/);

  await page.getByRole("button", { name: "Clean up…" }).click();
  await page.getByRole("form", { name: "Clean up" }).getByLabel("Not updated for").selectOption("24h");
  await page.getByRole("form", { name: "Clean up" }).getByRole("button", { name: "Dry run" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("button", { name: "Clean up 1" }).click();
  await dialog.getByRole("link", { name: "See the audit log" }).click();
  await page.getByRole("button", { name: /Undo #/ }).click();
  await dialog.getByRole("button", { name: "Restore 1" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 1 changed, 0 skipped.");

  await page.goto(`${url}/requests`);
  await expect(table.getByRole("row").nth(1)).toContainText("recent");
  await expect(table.getByRole("row", { name: /old-1/ }).getByText("1d 1h ago")).toHaveAttribute("title", exactly!);
  await page.goto(`${url}/requests/old-1`);
  await expect(page.getByRole("table", { name: "History" }).getByRole("row").last()).toContainText("restored from the archive");
});

test("a request that does not exist gets a 404 page that says so and leads to the audit log, where cleanups are", async ({ page }) => {
  for (const id of ["no-such-request", "..%2Fsecret"]) {
    const response = await page.goto(`/requests/${id}`);
    expect(response?.status(), id).toBe(404);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Request not found");
    await expect(page.getByText("This page could not be found")).toHaveCount(0);
  }
  await page.getByRole("main").getByRole("link", { name: "audit log" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Audit log");
});

test("the detail page shows the lifecycle, the history with a dropped late delivery, and the texts", async ({ page, tracker, operator }) => {
  tracker.create({ requestId: "lived", workspace: "gateway", state: "queued", sessionId: "sess-9", model: "opus", prompt: "line one\nline two" });
  const stale = tracker.claimNext()!;
  operator.retry({ ids: ["lived"] }, {}); // not allowed: a live worker holds it
  tracker.fail("lived", stale.token, "first try failed", { retryable: true });
  tracker.update("lived", { fields: { notBefore: 0 } });
  const claim = tracker.claimNext()!;
  tracker.complete("lived", claim.token, { fields: { output: "the answer", tokens: 77 } });
  tracker.complete("lived", stale.token, { fields: { output: "late" } });

  await page.goto("/requests/lived");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
  await expect(page.getByRole("img", { name: /Lifecycle: .*queued.*processing.*queued.*processing.*completed/ })).toBeVisible();
  await expect(page.getByRole("list", { name: "Time in each state" })).toContainText("processing");
  // The final state says when it was reached, not a time spent in it.
  await expect(page.getByRole("list", { name: "Time in each state" }).getByRole("listitem").last()).toHaveText(/^completed \d+(ms|s) ago$/);
  const history = page.getByRole("table", { name: "History" });
  await expect(history.getByRole("row", { name: /late delivery, dropped/ })).toBeVisible();
  await expect(history).toContainText("claimed");
  await expect(page.getByLabel("Prompt", { exact: true })).toHaveText("line one\nline two");
  await expect(page.getByLabel("Output", { exact: true })).toHaveText("the answer");
  await expect(page.getByRole("link", { name: "sess-9" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Retry", exact: true })).toBeDisabled();
});

test("a prompt holding HTML appears as text and runs nothing", async ({ page, tracker }) => {
  const attack = `<img src=x onerror="window.__pwned=1;alert(1)"><script>window.__pwned=2</script>`;
  tracker.create({ requestId: "xss", workspace: "gateway", state: "processing", prompt: attack });
  tracker.transition("xss", "failed", { fields: { error: attack, output: attack } });
  let dialogs = 0;
  page.on("dialog", (dialog) => {
    dialogs++;
    void dialog.dismiss();
  });

  await page.goto("/requests/xss");
  await expect(page.getByLabel("Prompt", { exact: true })).toHaveText(attack);
  await page.goto("/");
  await expect(page.getByRole("region", { name: "Recent failures" })).toContainText("<img src=x");
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  expect(dialogs).toBe(0);
});

test("an unreadable file shows in health while the table still works", async ({ page, stateDir, tracker }) => {
  tracker.create({ requestId: "fine", workspace: "gateway", state: "queued" });
  await page.goto("/requests");
  fs.writeFileSync(`${stateDir}/requests/broken.json`, '{"requestId": "broken", "state": ');
  await page.goto("/health");
  // The page may render before the watcher has ingested the file; it refreshes itself every 5 s.
  // An in-place write can also be seen half-written (empty) first.
  await expect(page.getByRole("table", { name: "Unreadable files" })).toContainText("requests/broken.json", { timeout: 12_000 });
  await expect(page.getByRole("table", { name: "Unreadable files" })).toContainText("invalid JSON", { timeout: 12_000 });
  await expect(page.getByText("watching requests/")).toBeVisible();
  await page.getByRole("link", { name: "Requests" }).click();
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row", { name: /fine/ })).toBeVisible();
});

test("health says how many files another program wrote since the server started, not only reqwatch's own", async ({ page, stateDir, tracker }) => {
  tracker.create({ requestId: "ours", workspace: "gateway", state: "queued" });
  await page.goto("/health");
  const written = page.getByRole("definition").filter({ hasText: "since this server started" });
  await expect(written).toHaveText(/^none since this server started/);
  writeRequestFile(stateDir, aRequest({ requestId: "theirs", state: "queued" }));
  // The page refreshes itself every 5 s.
  await expect(written).toHaveText(/^1 since this server started, indexed as the watcher reported them; the latest batch \d+ ms after the report$/, {
    timeout: 12_000,
  });
});

test("a cross-origin or tokenless action is refused and changes nothing; a foreign Host is refused everywhere", async ({
  page,
  request,
  tracker,
  app,
  operator,
}) => {
  tracker.create({ requestId: "victim", workspace: "gateway", state: "processing" });
  tracker.transition("victim", "failed");
  const body = { kind: "retry", ids: ["victim"] };

  const crossOrigin = await request.post("/api/actions", { data: body, headers: { Origin: "http://evil.example" } });
  expect(crossOrigin.status()).toBe(403);
  const noOrigin = await request.post("/api/actions", { data: body });
  expect(noOrigin.status()).toBe(403);
  const nullOrigin = await request.post("/api/actions", { data: body, headers: { Origin: "null" } });
  expect(nullOrigin.status()).toBe(403);
  const noToken = await request.post("/api/actions", { data: body, headers: { Origin: app.url } });
  expect(noToken.status()).toBe(403);
  expect((await noToken.json()).error.code).toBe("FORBIDDEN");
  const cleanup = await request.post("/api/actions", {
    data: { kind: "cleanup", olderThanMs: 0 },
    headers: { Origin: "http://evil.example", "x-reqwatch-token": "guess" },
  });
  expect(cleanup.status()).toBe(403);
  expect(tracker.get("victim")?.state).toBe("failed");
  expect(operator.actions.list()).toEqual([]);

  const rebound = await request.get("/api/requests", { headers: { Host: "attacker.example" } });
  expect(rebound.status()).toBe(403);
  const reboundPage = await request.get("/", { headers: { Host: "127.0.0.1.attacker.example" } });
  expect(reboundPage.status()).toBe(403);

  // A form on another site posting into the dashboard: refused, nothing changes.
  await page.setContent(
    `<form method="POST" action="${app.url}/api/actions" enctype="text/plain"><input name='{"kind":"retry","ids":["victim"],"x":"' value='"}'></form>`,
  );
  const [response] = await Promise.all([
    page.waitForResponse(`${app.url}/api/actions`),
    page.locator("form").evaluate((form: HTMLFormElement) => form.submit()),
  ]);
  expect(response.status()).toBe(403);
  expect(tracker.get("victim")?.state).toBe("failed");
});

test("after a restart the overview says which dead reqwatch workers' requests were requeued, with links; another program's stuck processing request is only flagged", async ({
  page,
  stateDir,
  launchApp,
}) => {
  const deadPid = spawnSync("true").pid!;
  const tenMinutesAgo = Date.now() - 10 * 60 * 1000;
  writeRequestFile(stateDir, aClaimedRequest("orphaned", { token: "t1", pid: deadPid, claimedAt: tenMinutesAgo, heartbeatAt: tenMinutesAgo }, { attempt: 1 }));
  writeRequestFile(stateDir, aStuckProcessingRequest("unheld"));
  writeRequestFile(stateDir, aRequest({ requestId: "fine", state: "completed" }));
  const { url } = await launchApp();

  await page.goto(url);
  const notice = page.getByRole("alert", { name: "Recovery notice" });
  await expect(notice).toContainText("When the dashboard started, 1 request's reqwatch worker was gone: 1 requeued.");
  await expect(notice.getByRole("link", { name: "unheld" })).toHaveCount(0);
  await expect(page.getByRole("table", { name: "Recent requests" }).getByRole("row", { name: /unheld/ })).toContainText(
    /stuck: processing 2h( \d+s)?; no reqwatch worker holds it \(written by another program\)/,
  );
  await notice.getByRole("link", { name: "orphaned" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("queued");
});

test("when the event stream fails, the page says so and polls every 5 s", async ({ page, tracker }) => {
  await page.route("**/api/events*", (route) => route.fulfill({ status: 503, body: "down" }));
  await page.goto("/requests");
  await expect(page.getByRole("status", { name: "Live status" })).toContainText("stream down: polling every 5 s", { timeout: 10_000 });
  tracker.create({ requestId: "seen-by-polling", workspace: "gateway", state: "queued" });
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row", { name: /seen-by-polling/ })).toBeVisible({ timeout: 12_000 });
});

test("text search finds requests by words of their prompt, output or error, and lives in the URL", async ({ page, tracker }) => {
  tracker.create({ requestId: "about-migrations", workspace: "gateway", state: "processing", prompt: "Write a migration for the orders table" });
  tracker.transition("about-migrations", "completed", { fields: { output: "Added 0042_orders_index.sql" } });
  tracker.create({ requestId: "about-websockets", workspace: "gateway", state: "processing", prompt: "Why does the websocket reconnect?" });
  tracker.transition("about-websockets", "failed", { fields: { error: "upstream overloaded" } });

  await page.goto("/requests");
  const search = page.getByRole("searchbox", { name: "Search" });
  await search.fill("migrat orders");
  await search.press("Enter");
  await expect(page).toHaveURL(/q=migrat\+orders/);
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row")).toHaveCount(2);
  await expect(table.getByRole("row", { name: /about-migrations/ })).toBeVisible();

  await search.fill("overloaded");
  await search.press("Enter");
  await expect(table.getByRole("row", { name: /about-websockets/ })).toBeVisible();
  await expect(table.getByRole("row")).toHaveCount(2);
  await page.reload();
  await expect(page.getByRole("searchbox", { name: "Search" })).toHaveValue("overloaded");
});

test("a custom created-between range filters the table", async ({ page, stateDir, launchApp }) => {
  const day = 86_400_000;
  writeRequestFile(
    stateDir,
    aRequest({ requestId: "three-days-old", state: "completed", createdAt: Date.now() - 3 * day, lastUpdatedAt: Date.now() - 3 * day }),
  );
  writeRequestFile(stateDir, aRequest({ requestId: "fresh", state: "completed" }));
  const { url } = await launchApp({ REQWATCH_RETENTION: "off" });
  await page.goto(`${url}/requests`);
  const filters = page.getByRole("form", { name: "Filters" });
  await filters.getByRole("combobox", { name: "Created" }).selectOption("custom");
  const local = (ms: number) => {
    const d = new Date(ms);
    return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  };
  await filters.getByLabel("From", { exact: true }).fill(local(Date.now() - 4 * day));
  await filters.getByLabel("To", { exact: true }).fill(local(Date.now() - 2 * day));
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row")).toHaveCount(2);
  await expect(table.getByRole("row", { name: /three-days-old/ })).toBeVisible();
  await expect(page).toHaveURL(/from=.*&to=/);
});

test("ids and sessions too long for their column are cut in the middle: the part where they differ stays in view, the whole id in its title", async ({
  page,
  tracker,
}) => {
  const sessions = ["sess-mx0o03kq8a7-4f2a91", "sess-mx0o03kq8a7-b07c3e"];
  for (const [i, sessionId] of sessions.entries())
    tracker.create({ requestId: `req-2026-11-28-gateway-worker-${i}-a91c${i}`, workspace: "gateway", sessionId, state: "queued" });
  for (const width of [1280, 1400]) {
    await page.setViewportSize({ width, height: 800 });
    await page.goto("/requests");
    const table = page.getByRole("table", { name: "Requests" });
    for (const [i, sessionId] of sessions.entries()) {
      const row = table.getByRole("row", { name: new RegExp(`worker-${i}-`) });
      // The link is named by the whole session; what shows of it ends as the session does.
      const session = row.getByRole("link", { name: sessionId });
      await expect(session.locator(".cut")).toHaveAttribute("title", sessionId);
      const tail = session.locator(".cut-tail");
      await expect(tail).toHaveText(sessionId.slice(-6));
      const cell = (await row.getByRole("cell").nth(3).boundingBox())!;
      const shown = (await tail.boundingBox())!;
      expect(shown.width, `${width} px`).toBeGreaterThan(0);
      expect(shown.x + shown.width, `${width} px`).toBeLessThanOrEqual(cell.x + cell.width + 0.5);
      // The head gives way (it is cut, with its ellipsis), not the tail.
      expect(await session.locator(".cut-head").evaluate((head) => head.scrollWidth > head.clientWidth), `${width} px`).toBe(true);
      await expect(row.getByRole("link", { name: `req-2026-11-28-gateway-worker-${i}-a91c${i}` }).locator(".cut-tail")).toHaveText(`-a91c${i}`.slice(-6));
    }
    await page.screenshot({ path: test.info().outputPath(`requests-${width}.png`) });
  }
});
