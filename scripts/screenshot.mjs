// `npm run screenshot`: run the demo for 30 s, then photograph the overview and the requests page
// with Playwright (Debian's Chromium) into docs/, for the README.
import { spawn } from "node:child_process";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { chromium } from "@playwright/test";
import { ROOT } from "./build-if-stale.mjs";

const port = process.env.REQWATCH_PORT ?? "4655";
const demo = spawn(process.execPath, [path.join(ROOT, "scripts/demo.mjs"), "--port", port], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
try {
  await sleep(Number(process.env.DEMO_RUN_MS ?? 30_000));
  const browser = await chromium.launch({ executablePath: process.env.REQWATCH_CHROMIUM ?? "/usr/bin/chromium", args: ["--disable-gpu", "--no-first-run"] });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  for (const [url, file] of [
    ["/", "demo-overview.png"],
    ["/requests", "demo-requests.png"],
  ]) {
    await page.goto(`http://127.0.0.1:${port}${url}`);
    await page.getByRole("status", { name: "Live status" }).getByText("live").waitFor();
    await sleep(1500);
    await page.screenshot({ path: path.join(ROOT, "docs", file) });
    console.log(`screenshot: docs/${file}`);
  }
  await browser.close();
} finally {
  demo.kill("SIGTERM");
}
