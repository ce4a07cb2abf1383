import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { adoptStateDir } from "../../lib/store/ownership";
import { openTracker } from "../../lib/tracker";
import { aClaimedRequest, writeRequestFile } from "../helpers/builders";
import { aDeadPid } from "../helpers/processes";
import { newestIds, writeRequests } from "../helpers/requestFiles";
import { expect, test } from "./fixtures";

test("a big folder opened for the first time: the newest requests show at once, a bar says how far indexing is, and the counts are whole when it ends", async ({
  page,
  launchApp,
}) => {
  // Bounds, not a pace: indexing 100,000 files takes 30-60 s here, several times that on a busy machine.
  test.setTimeout(600_000);
  // A folder of its own: the fixtures' app opens theirs before the test starts. No tracker has opened
  // this one: the dashboard makes its index, on a thread of its own, newest files first.
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-first-open-"));
  let stop = async () => {};
  try {
    adoptStateDir(stateDir);
    writeRequests(stateDir, 100_000);
    const newest = newestIds(stateDir, 3);
    const { url, kill } = await launchApp({ REQWATCH_STATE_DIR: stateDir });
    stop = kill;
    await page.goto(`${url}/requests`);
    const banner = page.getByRole("status", { name: "Indexing" });
    // First it lists the folder ("listing the request files"): seconds here, more on a busy machine.
    await expect(banner).toContainText(/Indexing the folder: .* of 100,000 request files, newest first/, { timeout: 120_000 });
    await expect(banner.getByRole("progressbar", { name: "Indexed" })).toBeVisible();
    const rows = page.getByRole("table", { name: "Requests" }).locator("tbody tr");
    await expect(rows.first()).toHaveAttribute("data-request-id", newest[0]!, { timeout: 120_000 });
    await expect(rows.nth(2)).toHaveAttribute("data-request-id", newest[2]!);

    // When it ends, the bar goes, the stuck monitor looks at the whole folder at once (not at its next
    // interval, 15 s on), and the counts cover every file (each state holds a sixth of them).
    await expect(banner).toBeHidden({ timeout: 480_000 });
    await expect(page.getByRole("link", { name: /^[1-9]\d* stuck$/ })).toBeVisible({ timeout: 30_000 });
    await page.goto(`${url}/`);
    await expect(page.getByRole("list", { name: "Requests by state" }).getByLabel("queued: 16667")).toBeVisible();
    await expect(page.getByRole("status", { name: "Indexing" })).toHaveCount(0);
  } finally {
    await stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
});

test("a restart on a big folder: the dashboard catches up with what changed while it was stopped, then releases a dead worker's claim and says so", async ({
  page,
  launchApp,
}) => {
  // Bounds, not a pace: indexing 100,000 files takes 30-60 s here, several times that on a busy machine.
  test.setTimeout(600_000);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-restart-"));
  let stop = async () => {};
  try {
    adoptStateDir(stateDir);
    writeRequests(stateDir, 5000);
    // The index as an earlier run of the dashboard left it.
    openTracker({ stateDir }).close();
    // Meanwhile: a worker died holding its claim, and a hook rewrote a request's prompt.
    const claimedAt = Date.now() - 10 * 60 * 1000;
    writeRequestFile(stateDir, aClaimedRequest("orphaned", { token: "t", pid: aDeadPid(), claimedAt, heartbeatAt: claimedAt }));
    const file = path.join(stateDir, "requests", "r00007.json");
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), prompt: "rewritten while the dashboard was stopped" }));

    const { url, kill } = await launchApp({ REQWATCH_STATE_DIR: stateDir, REQWATCH_RETENTION: "off" });
    stop = kill;
    await page.goto(`${url}/requests/r00007`);
    await expect(page.getByLabel("Prompt", { exact: true })).toHaveText("rewritten while the dashboard was stopped");
    await page.goto(`${url}/requests/orphaned`);
    await expect(page.getByText(/released: the worker's pid \d+ is gone/).first()).toBeVisible();
    await page.goto(`${url}/`);
    await expect(page.getByRole("alert", { name: "Recovery notice" })).toContainText(
      "When the dashboard started, 1 request's reqwatch worker was gone: 1 requeued.",
    );
  } finally {
    await stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
});

test("a first open on a full disk: the bar says indexing failed and why, and once there is room a later try completes it", async ({ page, launchApp }) => {
  test.setTimeout(120_000);
  // A small disk of its own: a tmpfs (the suite runs as root, as CI does), with 3,000 requests and
  // then a file that leaves too little room for their index.
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-full-disk-"));
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64m", "tmpfs", stateDir], { encoding: "utf8" });
  expect(mounted.status, `mounting a tmpfs needs root: ${mounted.stderr}`).toBe(0);
  const filler = path.join(stateDir, "filler");
  let stop = async () => {};
  try {
    adoptStateDir(stateDir);
    writeRequests(stateDir, 3000);
    spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"]);
    fs.truncateSync(filler, fs.statSync(filler).size - 600 * 1024);
    const { url, kill } = await launchApp({ REQWATCH_STATE_DIR: stateDir, REQWATCH_RETENTION: "off" });
    stop = kill;

    await page.goto(`${url}/requests`);
    const banner = page.getByRole("status", { name: "Indexing" });
    await expect(banner).toContainText(
      /Indexing the folder failed: (database or disk is full|The disk is full; nothing was changed)\. It is tried again \d+s after that failure/,
    );
    // Not "no requests yet": the folder has 3,000 of them, not yet in the index.
    await expect(page.getByText(/No requests yet/)).toHaveCount(0);

    fs.rmSync(filler);
    await expect(banner).toBeHidden({ timeout: 60_000 });
    await page.goto(`${url}/`);
    await expect(page.getByRole("list", { name: "Requests by state" }).getByLabel("queued: 500")).toBeVisible();
  } finally {
    await stop();
    spawnSync("umount", [stateDir]);
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
});
