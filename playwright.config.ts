import { defineConfig } from "@playwright/test";

/**
 * Each test gets its own state directory and its own dashboard server (dist/server.cjs) on a free port (see
 * tests/e2e/fixtures.ts), so tests never see each other's requests. The production build is made
 * once, in globalSetup, when it is missing or older than the sources.
 */
export default defineConfig({
  testDir: "tests/e2e",
  globalSetup: "./tests/e2e/globalSetup.ts",
  fullyParallel: false,
  // Two spec files at a time: each test has its own state folder, cache folder, server and port, and
  // spends most of its time waiting on the server and the browser.
  workers: 2,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  timeout: 60_000,
  use: {
    browserName: "chromium",
    headless: true,
    trace: "retain-on-failure",
    launchOptions: {
      // Playwright cannot download its browsers here; Debian's Chromium is installed by .ci/run.
      executablePath: process.env.REQWATCH_CHROMIUM ?? "/usr/bin/chromium",
      // No background traffic: the machine's network is closed and Chromium would retry forever.
      args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    },
  },
});
