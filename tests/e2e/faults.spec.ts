import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { AuditEntry } from "../../lib/db/auditLog";
import { actionOutcome, readOriginals } from "../helpers/actionOutcome";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { actionToken, expect, test } from "./fixtures";

const ROUNDS = 3;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Wait until the action has changed at least `atLeast` requests, then keep the writers' lock
 * (BEGIN IMMEDIATE on index.db, which every writer takes to commit) while it is still running: its
 * next commit waits for the lock, so the kill that follows lands mid-action with a step under way
 * (a retry's temp file written, a cleanup's chunk partly archived), whatever the machine's speed.
 * Until then the lock is taken and let go in turn, the action moving on a commit or two at a time,
 * and its progress is read under the lock from the audit entry's write-ahead in archive.db.
 * Returns whether it was caught running (false: it finished first) and the lock's release.
 */
async function freezeMidAction(stateDir: string, entryId: number, atLeast: number): Promise<{ frozen: boolean; release: () => void }> {
  const index = new Database(path.join(stateDir, "index.db"));
  index.pragma("busy_timeout = 0");
  const archive = new Database(path.join(stateDir, "archive.db"), { readonly: true });
  const entry = archive.prepare("SELECT status, changed FROM audit_log WHERE id = ?");
  const release = () => {
    if (index.inTransaction) index.exec("ROLLBACK");
    index.close();
  };
  // Short steps, as the server's own writers wait, so that neither side holds the other off for long.
  const lock = () => {
    for (;;) {
      try {
        index.exec("BEGIN IMMEDIATE");
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== "SQLITE_BUSY") throw error;
        Atomics.wait(sleeper, 0, 0, 0.05);
      }
    }
  };
  try {
    for (;;) {
      lock();
      const row = entry.get(entryId) as { status: string; changed: number };
      if (row.status !== "running") {
        index.exec("ROLLBACK");
        return { frozen: false, release };
      }
      if (row.changed >= atLeast) return { frozen: true, release };
      index.exec("ROLLBACK");
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  } catch (error) {
    release();
    throw error;
  } finally {
    archive.close();
  }
}

test("the server killed with SIGKILL during bulk retries and cleanups: every request wholly before or after, as the audit log says", async ({
  page,
  stateDir,
  tracker,
  launchApp,
}) => {
  test.setTimeout(240_000);
  const count = 2000;
  for (let i = 0; i < count; i++) {
    const id = `r${String(i).padStart(4, "0")}`;
    tracker.create({ requestId: id, workspace: "gateway", state: "processing" });
    tracker.transition(id, "failed", { fields: { error: "upstream 503" } });
  }
  const requestIds = () =>
    fs
      .readdirSync(path.join(stateDir, "requests"))
      .filter((name) => name.endsWith(".json"))
      .map((name) => name.slice(0, -5));
  const rounds: string[] = [];
  for (const kind of ["retry", "cleanup"] as const) {
    for (let round = 0; round < ROUNDS; round++) {
      const app = await launchApp();
      const ids = requestIds().filter((id) => tracker.get(id)?.state === "failed");
      const originals = readOriginals(stateDir, ids);
      const body = kind === "retry" ? { kind, query: "states=failed" } : { kind, olderThanMs: 0 };
      const started = await fetch(`${app.url}/api/actions`, {
        method: "POST",
        headers: { Origin: app.url, "x-reqwatch-token": await actionToken(page, app.url), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(started.status).toBe(202);
      const { entry: startedEntry } = (await started.json()) as { entry: AuditEntry };
      // Each round kills a little later into the action.
      const { frozen, release } = await freezeMidAction(stateDir, startedEntry.id, 1 + Math.floor((round * ids.length) / 8));
      await app.kill();
      release();

      // A new server on the same directory closes the entry; the files and the archive must agree with it.
      const next = await launchApp();
      const entry = ((await (await fetch(`${next.url}/api/actions`)).json()) as { entries: AuditEntry[] }).entries.find((e) => e.id === startedEntry.id)!;
      const outcome = actionOutcome(stateDir, entry, ids, originals);
      expect(outcome.problems, `${kind} round ${round}`).toEqual([]);
      expect(outcome.changed).toBe(entry.changed);
      // Frozen under the lock, the action cannot have finished; otherwise any outcome is fine as long as it is whole.
      if (frozen) expect(entry.status, `${kind} round ${round}`).not.toBe("done");
      rounds.push(`${kind} ${entry.changed}/${ids.length}${entry.status === "done" ? " (finished)" : ""}`);
      if (kind === "retry") {
        // Put the retried ones back to failed for the next round (as a worker would fail them).
        for (let n = 0; n < entry.changedIds.length; n++) {
          const claim = tracker.claimNext({ worker: "test" });
          if (claim) tracker.fail(claim.request.requestId, claim.token, "failed again", { retryable: false });
        }
      }
      await next.kill();
    }
  }
  console.log(`changed before each kill: ${rounds.join(", ")}`);
  expect(rounds.some((r) => !r.includes("finished") && !/ 0\//.test(r))).toBe(true);

  // A person sees the interrupted actions as such.
  const last = await launchApp();
  await page.goto(`${last.url}/audit`);
  await expect(page.locator("main")).toContainText("Interrupted: the process stopped after");
});

test("index.db deleted, then corrupted, while the server runs: rebuilt from the files, and the open page refetches on its own", async ({
  page,
  app,
  stateDir,
}) => {
  for (let i = 0; i < 5; i++) writeRequestFile(stateDir, aRequest({ requestId: `before-${i}`, state: "failed" }));
  await page.goto(`${app.url}/requests`);
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row", { name: /before-4/ })).toBeVisible();

  for (const [n, damage] of [
    [1, () => ["", "-wal", "-shm"].forEach((suffix) => fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true }))],
    [2, () => fs.writeFileSync(path.join(stateDir, "index.db"), Buffer.alloc(256 * 1024, 0x5a))],
  ] as const) {
    damage();
    // A request written while the index is being lost and rebuilt: it must appear without a reload.
    writeRequestFile(stateDir, aRequest({ requestId: `after-${n}`, state: "failed" }));
    await expect.poll(async () => (await (await fetch(`${app.url}/api/health`)).json()).guard.rebuilds, { timeout: 10_000 }).toBe(n);
    await expect(table.getByRole("row", { name: new RegExp(`after-${n}`) })).toBeVisible({ timeout: 10_000 });
    await expect(table.getByRole("row", { name: /before-4/ })).toBeVisible();
  }
  await page.goto(`${app.url}/health`);
  await expect(page.getByText(/^2 while running; latest .*, because index\.db was overwritten: it is not a SQLite database any more/)).toBeVisible();
  expect(fs.readFileSync(path.join(stateDir, "index.db")).subarray(0, 15).toString()).toBe("SQLite format 3");
});

test("the state directory removed and recreated while the server runs: health says so, and the server recovers without a restart", async ({
  page,
  app,
  stateDir,
}) => {
  writeRequestFile(stateDir, aRequest({ requestId: "old-one", state: "queued" }));
  await page.goto(`${app.url}/health`);
  await expect(page.getByText("Index rebuilds")).toBeVisible();
  // Gone at once: a recursive delete in place races the server, whose index guard may recreate
  // index.db in the folder between the delete's unlinks and its rmdir (ENOTEMPTY, seen once in CI).
  const gone = `${stateDir}-gone`;
  fs.renameSync(stateDir, gone);
  fs.rmSync(gone, { recursive: true, force: true });
  await expect(page.locator("main").getByRole("alert")).toContainText(`The state directory ${stateDir} is missing; waiting for it to be created again.`, {
    timeout: 10_000,
  });
  expect((await (await fetch(`${app.url}/api/health`)).json()).ok).toBe(false);

  // Someone recreates it (a worker starting, a person restoring a backup).
  writeRequestFile(stateDir, aRequest({ requestId: "new-one", state: "queued" }));
  await expect(page.locator("main").getByRole("alert")).toHaveCount(0, { timeout: 10_000 });
  await expect(page.getByText(/^1 while running; latest .*, because index\.db was deleted/)).toBeVisible();
  expect((await (await fetch(`${app.url}/api/health`)).json()).ok).toBe(true);
  await page.goto(`${app.url}/requests`);
  const table = page.getByRole("table", { name: "Requests" });
  await expect(table.getByRole("row", { name: /new-one/ })).toBeVisible();
  await expect(table.getByRole("row", { name: /old-one/ })).toHaveCount(0);
  // The watcher is back on the new folders: a file written now shows up live.
  writeRequestFile(stateDir, aRequest({ requestId: "newer-one", state: "queued" }));
  await expect(table.getByRole("row", { name: /newer-one/ })).toBeVisible();
  await page.goto(`${app.url}/health`);
  await expect(page.getByText("watching requests/")).toBeVisible();
});
