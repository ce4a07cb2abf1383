import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { addMessage, claudeMemWithOneOfEach, createClaudeMemDb } from "../helpers/claudeMemDb";
import { openModesOf } from "../helpers/processes";
import { expect, test } from "./fixtures";

const MIN = 60_000;
const sha256 = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

const rowsOf = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT * FROM pending_messages ORDER BY id").all();
  } finally {
    db.close();
  }
};

test("another program's queue beside the folder: its counts and stuck rows, filtered and live, its errors, and its database untouched", async ({
  page,
  stateDir,
  tracker,
  launchApp,
}) => {
  const dir = path.dirname(stateDir);
  const file = path.join(dir, "claude-mem.db");
  const { db, ids, dead } = claudeMemWithOneOfEach(file);
  // The dashboard has no write permission on the database (root ignores it: the descriptor's mode is checked below), and a second source is not a database at all.
  fs.chmodSync(file, 0o444);
  const notes = path.join(dir, "notes.db");
  fs.writeFileSync(notes, "these are notes, not a database; a source that cannot be read says so and changes nothing for the others");
  tracker.create({ requestId: "own-1", workspace: "web", state: "queued" });
  const bytes = sha256(file);
  const rows = rowsOf(file);

  const { url } = await launchApp({ REQWATCH_SOURCES: JSON.stringify([`claude-mem:${file}`, `claude-mem:${notes}`]) });
  await page.goto(url);
  const sources = page.getByRole("table", { name: "Sources" });
  await expect(sources.getByRole("row", { name: /^claude-mem claude-mem's pending_messages/ })).toContainText("schema g6 (v12.4.5-v12.4.9)");
  await expect(sources.getByRole("row", { name: /^claude-mem-2 / })).toContainText(`cannot be read: claude-mem source: ${notes} is not an SQLite database.`);

  // The dashboard holds the database open read only (what the kernel says of its descriptor), whatever the file's permissions allow.
  expect(openModesOf(file)).toEqual([{ pid: expect.any(Number), mode: 0 }]);

  // The header says it on every page, beside the folder's own count.
  const header = page.getByRole("banner");
  await expect(header.getByRole("link", { name: "0 stuck", exact: true })).toBeVisible();
  await expect(header.getByRole("link", { name: "claude-mem-2: cannot be read" })).toHaveAttribute("href", "/health");
  await expect(header.getByRole("link", { name: "claude-mem: 1 stuck" })).toHaveAttribute("href", "/requests?source=claude-mem&stuck=1");

  // The stuck count leads to the stuck rows, with the reason by claude-mem's own rules.
  await sources.getByRole("link", { name: "1 stuck" }).click();
  await expect(page).toHaveURL(/\/requests\?source=claude-mem&stuck=1$/);
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row")).toHaveCount(2);
  await expect(table.getByRole("row", { name: new RegExp(`claude-mem-${ids.crashed}`) })).toContainText(
    new RegExp(`stuck: processing 2m( \\d+s)?; claude-mem worker pid ${dead} is gone`),
  );
  await expect(page.getByTestId("source-line")).toContainText(`claude-mem's pending_messages in ${file}, read only; schema g6 (v12.4.5-v12.4.9)`);
  // Another program's queue is never acted on: every action says why, and there is nothing to export or clean.
  for (const name of ["Retry selected (0)", `Retry claude-mem-${ids.crashed}`]) {
    await expect(page.getByRole("button", { name })).toBeDisabled();
    await expect(page.getByRole("button", { name })).toHaveAttribute(
      "title",
      /^claude-mem is another program's queue, read only here: to retry and delete .* --source <source>\?write=1/,
    );
  }
  for (const name of ["Retry all matching", "Clean up…", "Export CSV"])
    await expect(page.getByRole("button", { name }).or(page.getByRole("link", { name }))).toHaveCount(0);

  // The filters mean what they mean for the folder: states, the project as workspace, words in the text.
  const filters = page.getByRole("form", { name: "Filters" });
  await filters.getByLabel("Stuck only").uncheck();
  await filters.getByRole("checkbox", { name: "failed" }).check();
  await expect(page).toHaveURL(/source=claude-mem&states=failed$/);
  await expect(table.getByRole("row")).toHaveCount(2);
  await expect(table.getByRole("row", { name: new RegExp(`claude-mem-${ids.failed}`) })).toContainText("failed after 3 retries, claude-mem's limit");
  await filters.getByRole("checkbox", { name: "failed" }).uncheck();
  await filters.getByLabel("Workspace").fill("we");
  await expect(table.getByRole("row")).toHaveCount(3);
  await filters.getByLabel("Search").fill("LOGIN");
  await expect(table.getByRole("row")).toHaveCount(2);
  await expect(table.getByRole("row").nth(1)).toContainText(`claude-mem-${ids.crashed}`);
  await filters.getByLabel("Search").fill("");
  await filters.getByLabel("Workspace").fill("");
  await expect(table.getByRole("row")).toHaveCount(6);

  // The owner writes while the page is open: the new message shows, and its stuck count moves.
  const newer = addMessage(db, { status: "processing", createdAt: Date.now() - 20 * MIN, startedAt: Date.now() - 10 * MIN, workerPid: dead, project: "web" });
  await expect(table.getByRole("row", { name: new RegExp(`claude-mem-${newer}`) })).toContainText(
    /stuck: processing 10m( \d+s)?, past claude-mem's own 5m stuck limit|stuck: processing 10m( \d+s)?; claude-mem worker pid \d+ is gone/,
    { timeout: 3000 },
  );
  await expect(filters.getByLabel("Source")).toContainText("claude-mem (6 rows, 2 stuck)");
  await expect(header.getByRole("link", { name: "claude-mem: 2 stuck" })).toBeVisible();

  // A row's own page: what it is, why it is stuck, its text; no action.
  await table.getByRole("link", { name: `claude-mem-${ids.crashed}`, exact: true }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Request claude-mem-${ids.crashed} processing`);
  await expect(page.getByRole("alert").filter({ hasText: "Stuck:" })).toContainText(`claude-mem worker pid ${dead} is gone`);
  await expect(page.getByText("observation Edit: fix the login form")).toBeVisible();
  // And as claude-mem stores it: every column read, the raw status and pid among them.
  const stored = page.getByRole("table", { name: "As stored" });
  await expect(stored.getByRole("row", { name: /^status / })).toContainText("processing");
  await expect(stored.getByRole("row", { name: /^worker_pid / })).toContainText(String(dead));
  await expect(page.getByRole("button", { name: "Retry" })).toHaveCount(0);

  // The folder's own requests are the table without a source; the Source filter says which.
  await page.goto(`${url}/requests`);
  await expect(table.getByRole("row", { name: /own-1/ })).toBeVisible();
  await expect(filters.getByLabel("Source").locator("option:checked")).toHaveText("state folder");
  await filters.getByLabel("Source").selectOption("claude-mem");
  await expect(page).toHaveURL(/\/requests\?source=claude-mem$/);
  await expect(table.getByRole("row")).toHaveCount(7);

  // The Health page: each source, where it is read from, and what is wrong with the one that cannot be.
  await page.goto(`${url}/health`);
  const health = page.getByRole("table", { name: "Sources" });
  await expect(health.getByRole("row", { name: /^claude-mem claude-mem/ })).toContainText(file);
  await expect(health.getByRole("row", { name: /^claude-mem-2 / })).toContainText("is not an SQLite database");

  // Looking changed nothing: the same bytes (the owner's connection is still open, so its WAL is its own) and the same rows but the owner's new one.
  await page.goto("about:blank");
  expect(sha256(file)).toBe(bytes);
  expect(rowsOf(file).filter((row) => (row as { id: number }).id !== newer)).toEqual(rows);
  db.close();
});

test("a source named in the URL that the dashboard does not read: the folder's table, and why", async ({ page, app }) => {
  await page.goto(`${app.url}/requests?source=redis`);
  await expect(page.getByRole("alert").filter({ hasText: 'No source is named "redis"' })).toContainText("the dashboard reads none (start it with --source)");
  await expect(page.getByRole("form", { name: "Filters" }).getByLabel("Source")).toHaveCount(0);
});

test("a source opened for writing: a stuck or failed message retried, a left-over one deleted, each after its dry run, audited, and nothing else touched", async ({
  page,
  stateDir,
  launchApp,
}) => {
  const dir = path.dirname(stateDir);
  const file = path.join(dir, "claude-mem.db");
  const { db, ids } = claudeMemWithOneOfEach(file);
  // A newer claude-mem's table, not written for three hours: its rows are left-overs.
  const old = path.join(dir, "old", "claude-mem.db");
  fs.mkdirSync(path.dirname(old));
  const retired = createClaudeMemDb(old, "g8");
  const leftOver = addMessage(retired, { status: "processing", createdAt: Date.now() - 3 * 60 * MIN, startedAt: Date.now() - 3 * 60 * MIN });
  retired.close();

  const { url } = await launchApp({ REQWATCH_SOURCES: JSON.stringify([`claude-mem:${file}?write=1`, `claude-mem:${old}?write=1`]) });
  await page.goto(`${url}/requests?source=claude-mem`);
  const table = page.getByRole("table", { name: "Requests" });
  await table.getByRole("button", { name: `Retry claude-mem-${ids.crashed}` }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("1 of 1 would go back to pending, as claude-mem's own retry does.");
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText(
    "UPDATE pending_messages SET status = 'pending', started_processing_at_epoch = NULL, worker_pid = NULL WHERE id = ? AND status = ?",
  );
  // The dry run changed nothing.
  expect(rowsOf(file).find((row) => (row as { id: number }).id === ids.crashed)).toMatchObject({ status: "processing" });
  await dialog.getByRole("button", { name: "Retry 1" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 1 retried, 0 skipped.");
  await dialog.getByRole("button", { name: "Close" }).click();
  await expect(table.getByRole("row", { name: new RegExp(`claude-mem-${ids.crashed}`) }).getByText("queued")).toBeVisible();
  expect(rowsOf(file).find((row) => (row as { id: number }).id === ids.crashed)).toMatchObject({ status: "pending", worker_pid: null });

  // Two selected: the failed one goes back; the one whose worker runs is skipped, and says why.
  await table.getByRole("checkbox", { name: `Select claude-mem-${ids.failed}` }).check();
  await table.getByRole("checkbox", { name: `Select claude-mem-${ids.running}` }).check();
  await page.getByRole("button", { name: "Retry selected (2)" }).click();
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("1 would be skipped: processing, not stuck: its worker may still finish it");
  await dialog.getByRole("button", { name: "Retry 1" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 1 retried, 1 skipped.");
  await dialog.getByRole("button", { name: "Close" }).click();
  const after = rowsOf(file) as { id: number; status: string }[];
  expect(after.map((row) => [row.id, row.status])).toEqual([
    [ids.crashed, "pending"],
    [ids.running, "processing"],
    [ids.waiting, "pending"],
    [ids.done, "processed"],
    [ids.failed, "pending"],
  ]);
  // A table claude-mem still works through offers no delete.
  await expect(page.getByRole("button", { name: /^Delete/ })).toHaveCount(0);

  // The left-over: deleted from its own page.
  await page.goto(`${url}/requests?source=claude-mem-2`);
  await table.getByRole("link", { name: `claude-mem-${leftOver}`, exact: true }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Stuck:" })).toContainText("left over: claude-mem from v13.4.0 keeps its queue in memory");
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  await expect(dialog.getByRole("region", { name: "Dry run" })).toContainText("1 of 1 would be deleted from a table claude-mem no longer reads.");
  await dialog.getByRole("button", { name: "Delete 1" }).click();
  await expect(dialog.getByRole("status")).toContainText("Done: 1 deleted, 0 skipped.");
  expect(rowsOf(old)).toEqual([]);

  // Each run is in reqwatch's own audit log; the dry runs are not.
  await page.goto(`${url}/audit`);
  const audit = page.getByRole("table").first();
  // Each names the messages it acted on, as the folder's actions do.
  await expect(audit).toContainText(`Delete claude-mem-${leftOver} of claude-mem-2 (${old})`);
  await expect(audit).toContainText(`Retry 2 messages: claude-mem-${ids.failed}, claude-mem-${ids.running} of claude-mem (${file})`);
  await expect(audit).toContainText(`Retry claude-mem-${ids.crashed} of claude-mem (${file})`);
  db.close();
});
