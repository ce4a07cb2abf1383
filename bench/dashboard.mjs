// The dashboard measured in a browser, driven by Playwright in Debian's Chromium against the dashboard server over
// 100,000 indexed requests: the requests page's first render, a filter change until the table
// shows the result, and a foreign write until its row is visible.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { chromium } from "@playwright/test";
import { startServer } from "./server.mjs";

const now = () => performance.timeOrigin + performance.now();

export async function measureDashboard({ ROOT, writeFiles, tempDir, openTracker, summarize }) {
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-if-stale.mjs")], { stdio: "inherit" });
  const stateDir = tempDir("dashboard");
  console.log("\nwriting 100,000 request files for the dashboard...");
  writeFiles(stateDir, 100_000);
  openTracker({ stateDir, recover: false }).close();
  const server = await startServer(ROOT, stateDir);
  const browser = await chromium.launch({ executablePath: process.env.REQWATCH_CHROMIUM ?? "/usr/bin/chromium", args: ["--disable-gpu", "--no-first-run"] });
  try {
    const page = await browser.newPage();
    const rows = page.getByRole("table", { name: "Requests" }).getByRole("row");
    // Warm the server's code paths once (the first request after a start compiles nothing, but loads modules).
    await page.goto(`${server.url}/requests`);
    await rows.nth(50).waitFor();

    const firstRender = [];
    for (let i = 0; i < 15; i++) {
      const start = now();
      await page.goto(`${server.url}/requests${i % 2 ? "?states=failed" : ""}`);
      await rows.nth(50).waitFor();
      await page.getByRole("status", { name: "Live status" }).getByText("live").waitFor();
      firstRender.push(now() - start);
    }
    summarize("requests page at 100k: navigation until the table is live", firstRender, { target: "<= 1.5 s" });

    // The overview with its four charts (a week of activity behind them): until every chart is drawn and the page is live.
    const overview = [];
    for (let i = 0; i < 10; i++) {
      const start = now();
      await page.goto(`${server.url}/`);
      await page.locator("figure.chart canvas").nth(3).waitFor();
      await page.getByRole("status", { name: "Live status" }).getByText("live").waitFor();
      overview.push(now() - start);
    }
    summarize("overview with charts at 100k: navigation until the charts are drawn and live", overview, { target: "<= 1.5 s" });
    const chartApi = [];
    for (let i = 0; i < 30; i++) {
      const start = now();
      const response = await fetch(`${server.url}/api/activity?range=${["1h", "24h", "7d"][i % 3]}`);
      await response.json();
      chartApi.push(now() - start);
    }
    summarize("GET /api/activity at 100k (1h, 24h, 7d in turn)", chartApi, { target: "p95 <= 50 ms" });

    await page.goto(`${server.url}/requests`);
    await rows.nth(50).waitFor();
    const filterChange = [];
    // A different workspace each time, so no answer comes from the browser's cache: typed, then Enter.
    const workspace = page.getByRole("form", { name: "Filters" }).getByLabel("Workspace");
    for (let i = 0; i < 20; i++) {
      await workspace.fill(`ws${i}`);
      const start = now();
      await workspace.press("Enter");
      await page.waitForFunction(
        (want) => {
          const cells = [...document.querySelectorAll('table[aria-label="Requests"] tbody tr td:nth-child(3)')];
          return cells.length === 50 && cells.every((cell) => cell.textContent === want);
        },
        `ws${i}`,
        { polling: "raf" },
      );
      filterChange.push(now() - start);
    }
    summarize("requests page at 100k: filter change until the table shows it", filterChange, { target: "<= 300 ms" });

    await page.goto(`${server.url}/requests`);
    await rows.nth(50).waitFor();
    await page.getByRole("status", { name: "Live status" }).getByText("live").waitFor();
    const dir = path.join(stateDir, "requests");
    const visible = [];
    for (let i = 0; i < 30; i++) {
      const id = `seen${i}`;
      const temp = path.join(dir, `.${id}.tmp`);
      fs.writeFileSync(temp, JSON.stringify({ requestId: id, workspace: "live", state: "queued", createdAt: Date.now(), lastUpdatedAt: Date.now() }));
      const start = now();
      fs.renameSync(temp, path.join(dir, `${id}.json`));
      await page.getByRole("link", { name: id, exact: true }).waitFor();
      visible.push(now() - start);
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    summarize("requests page at 100k: foreign write until its row is visible", visible, { target: "p95 <= 500 ms" });

    // A bulk retry of every failed request (about 16,700): the page shows progress, and the server
    // keeps answering meanwhile (measured as /api/status round trips from another client).
    await page.goto(`${server.url}/requests?states=failed`);
    await page.getByRole("button", { name: "Retry all matching" }).click();
    const dialog = page.getByRole("dialog");
    const confirm = dialog.getByRole("button", { name: /^Retry \d+$/ });
    await confirm.waitFor();
    const count = Number((await confirm.textContent()).replace(/\D/g, ""));
    const started = now();
    await confirm.click();
    const during = [];
    let running = true;
    const probe = (async () => {
      while (running) {
        const t = now();
        await fetch(`${server.url}/api/status`);
        during.push(now() - t);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await dialog.getByRole("progressbar", { name: "Progress" }).waitFor({ timeout: 30_000 });
    const progressSeenAfter = now() - started;
    await dialog.getByRole("status").getByText(/^Done:/).waitFor({ timeout: 600_000 });
    const took = now() - started;
    running = false;
    await probe;
    summarize(`bulk retry of ${count}: other requests' latency meanwhile`, during, { target: "the page stays responsive" });
    console.log(`bulk retry of ${count}: progress shown after ${Math.round(progressSeenAfter)} ms, done after ${(took / 1000).toFixed(1)} s (${Math.round(count / (took / 1000))}/s)`);

    await measureExport(server, summarize);
  } finally {
    await browser.close();
    await server.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

/** The server process's resident memory, in MB (Linux). */
function rssMB(pid) {
  const line = fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
  return Number(line.replace(/\D/g, "")) / 1024;
}

/** Every one of the 100,000 requests as JSON Lines from the running server: the time, and how much the server's memory grew meanwhile. */
async function measureExport(server, summarize) {
  const times = [];
  const growth = [];
  for (let run = 0; run < 3; run++) {
    const before = rssMB(server.child.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMB(server.child.pid))), 20);
    const start = now();
    const response = await fetch(`${server.url}/api/export?format=jsonl`);
    let lines = 0;
    const decoder = new TextDecoder();
    for await (const chunk of response.body) lines += (decoder.decode(chunk, { stream: true }).match(/\n/g) ?? []).length;
    times.push(now() - start);
    clearInterval(sampler);
    growth.push(peak - before);
    if (lines < 100_000) throw new Error(`the export had ${lines} rows`);
  }
  summarize("export of 100k as JSON Lines, streamed from the server", times, { target: "<= 5 s" });
  summarize("export of 100k: the server's memory growth meanwhile (MB, not ms)", growth, { target: "<= 50 MB" });
}
