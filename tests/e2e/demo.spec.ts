import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test as base, expect, type Page } from "@playwright/test";
import { freePort, waitForExit } from "../helpers/processes";

const ROOT = path.resolve(__dirname, "../..");
/** What the demo's gateway gives its unserved workspace at most (scripts/demo/gateway.cjs). */
const NIGHTLY_AT_MOST = 6;

interface Demo {
  url: string;
  /** Its state directory, under the temporary folder the test gave it. */
  stateDir: string;
  /** Everything it printed so far. */
  output: () => string;
  /** SIGTERM, as Ctrl-C would; resolves with its exit code. */
  stop: () => Promise<number | null>;
  /** Whether any process the demo started (its process group) still runs. */
  anyLeft: () => boolean;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `npm run demo` as a person runs it, on a free port, in a process group of its own so nothing it starts can hide. */
const test = base.extend<{ demo: Demo }>({
  demo: async ({}, use) => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-e2e-demo-"));
    const port = await freePort();
    let output = "";
    const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, "scripts/demo.mjs"), "--port", String(port)], {
      cwd: ROOT,
      detached: true,
      // Its folder and its cache (where received telemetry is kept) go under the test's own; short thresholds, as the demo lets the environment set them; no OTLP receiver on the machine's 4318.
      env: { ...process.env, TMPDIR: parent, REQWATCH_CACHE_DIR: path.join(parent, "cache"), REQWATCH_QUEUED_STUCK_AFTER: "3s", REQWATCH_OTLP_PORT: "off" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    const url = `http://127.0.0.1:${port}`;
    const stateDir = await new Promise<string>((resolve, reject) => {
      const look = () => {
        const found = /^demo: state directory (.+)$/m.exec(output);
        if (found) resolve(found[1]!);
      };
      child.stdout!.on("data", look);
      child.on("exit", (code) => reject(new Error(`the demo exited (${code}):\n${output}`)));
    });
    try {
      await use({
        url,
        stateDir,
        output: () => output,
        stop: async () => {
          child.kill("SIGTERM");
          return waitForExit(child);
        },
        anyLeft: () => groupAlive(child.pid!),
      });
    } finally {
      // Whatever the test got to: nothing of the demo's outlives it.
      if (groupAlive(child.pid!)) process.kill(-child.pid!, "SIGKILL");
      fs.rmSync(parent, { recursive: true, force: true });
    }
  },
});

async function countOf(page: Page, state: string): Promise<number> {
  return Number(
    await page
      .getByRole("list", { name: "Requests by state" })
      .getByRole("listitem", { name: new RegExp(`^${state}: `) })
      .locator(".n")
      .textContent(),
  );
}

test("the demo shows every feature within its first minute, and leaves nothing behind when stopped", async ({ page, demo }) => {
  test.setTimeout(120_000);
  // The demo's first minute, from when its dashboard answers: every check below is within it.
  await expect.poll(async () => (await fetch(`${demo.url}/api/health`).catch(() => null))?.ok ?? false, { timeout: 30_000 }).toBe(true);
  const minute = Date.now() + 60_000;
  const left = () => ({ timeout: Math.max(1, minute - Date.now()) });
  expect(demo.output()).toContain("demo: thresholds REQWATCH_QUEUED_STUCK_AFTER=3s REQWATCH_HEARTBEAT_TIMEOUT=6s REQWATCH_MONITOR_INTERVAL=2s");

  // Its thresholds, said on its Health page.
  await page.goto(`${demo.url}/health`);
  await expect(page.getByLabel("Thresholds")).toContainText(
    "queued stuck after 3s (REQWATCH_QUEUED_STUCK_AFTER), claimed stuck after 6s without a heartbeat (REQWATCH_HEARTBEAT_TIMEOUT)",
  );

  // Sessions with their recorded context, none known only from their requests.
  await page.goto(`${demo.url}/sessions`);
  const sessions = page.getByRole("table", { name: "Sessions" });
  await expect(sessions.getByRole("row").filter({ has: page.getByRole("cell") })).toHaveCount(5, left());
  await expect(page.getByText("no recorded context")).toHaveCount(0);
  await sessions.getByRole("row").nth(1).getByRole("link").click();
  await expect(page.getByLabel("Context")).toContainText(/Current focus: \w+/);
  await expect(page.getByRole("region", { name: "Next steps" }).getByRole("listitem").first()).toBeVisible();
  await expect(page.getByRole("table", { name: "Files modified" }).getByRole("row").nth(1)).toBeVisible();

  // A request moving through its states while its page is open: no reload.
  await page.goto(`${demo.url}/requests?states=queued&workspace=gateway-eu`);
  const waiting = await page.getByRole("table", { name: "Requests" }).locator("tr[data-request-id]").first().getAttribute("data-request-id", left());
  await page.goto(`${demo.url}/requests/${waiting}`);
  await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(/(completed|failed|timeout)$/, left());
  expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

  // The unserved queue goes stuck and stays bounded: by the time the gateway has made enough
  // requests that one in six would have overfilled it, it holds no more than its bound.
  await page.goto(demo.url);
  const nightly = page.getByRole("table", { name: "Queues" }).getByRole("row", { name: /^nightly / });
  await expect(nightly.getByRole("link", { name: /^stuck: \d+ of \d+ queued \(waited too long\)$/ })).toBeVisible(left());
  await expect
    .poll(
      async () =>
        (await Promise.all(["queued", "processing", "completed", "failed", "timeout"].map((state) => countOf(page, state)))).reduce((a, b) => a + b, 0),
      left(),
    )
    .toBeGreaterThanOrEqual(NIGHTLY_AT_MOST * 6 * 2);
  expect(Number(await nightly.getByRole("cell").nth(1).textContent())).toBeLessThanOrEqual(NIGHTLY_AT_MOST);
  await expect(page.getByRole("link", { name: /^\d+ stuck$/ })).not.toHaveText("0 stuck");
  // The counts moved without a reload: requests finish as the page is open.
  const completed = await countOf(page, "completed");
  await expect.poll(() => countOf(page, "completed"), left()).toBeGreaterThan(completed);

  // Ctrl-C: every process it started exits, and its folder goes.
  expect(await demo.stop()).toBe(0);
  expect(demo.anyLeft()).toBe(false);
  expect(fs.existsSync(demo.stateDir)).toBe(false);
  expect(
    await fetch(`${demo.url}/api/health`).then(
      () => "answering",
      () => "gone",
    ),
  ).toBe("gone");
});
