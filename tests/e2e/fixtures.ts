import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import net from "node:net";
import path from "node:path";
import { test as base, expect, type Page } from "@playwright/test";
import { adoptStateDir } from "../../lib/store/ownership";
import type { Operator } from "../../lib/roles/operator";
import type { Reader } from "../../lib/roles/reader";
import { openRoles, type Recording } from "../../lib/tracker";
import type { Tracker } from "../../lib/types";
import { freePort } from "../helpers/processes";

const ROOT = path.resolve(__dirname, "../..");

/**
 * Resolves once the server this test started answers: its health names the test's state directory.
 * Another server may take the port between the pick and the start; then ours exits, and the launch
 * is tried again on another port ("port taken").
 */
async function waitForHealth(url: string, stateDir: string, server: ChildProcess, log: () => string): Promise<"up" | "port taken"> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) {
      if (/port \d+ is in use/.test(log())) return "port taken";
      throw new Error(`the server exited (${server.exitCode}):\n${log()}`);
    }
    try {
      const response = await fetch(url);
      if (response.ok && ((await response.json()) as { stateDir?: string }).stateDir === stateDir) return "up";
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server did not become healthy at ${url}:\n${log()}`);
}

interface Options {
  /** Extra environment for the app server (thresholds, intervals). */
  appEnv: Record<string, string>;
}

interface Fixtures {
  /** A fresh state directory for this test. */
  stateDir: string;
  /** The test's state directory opened as reqwatch's programs open it (lib/tracker.ts `openRoles`), closed after the test. */
  recording: Recording;
  /** The library's tracker on it: seed it before or while the app runs. */
  tracker: Tracker;
  /** Its reader and operator: read or act on the folder beside the app, as the dashboard does. */
  reader: Reader;
  operator: Operator;
  /** The dashboard on a free port, serving `stateDir`; `page` and `request` use it as their base URL. */
  app: { url: string };
  /** Start the dashboard when the test says (after it has prepared the state directory); `kill` is SIGKILL. */
  launchApp: (env?: Record<string, string>) => Promise<{ url: string; kill: () => Promise<void> }>;
}

export const test = base.extend<Fixtures & Options>({
  appEnv: [{}, { option: true }],

  stateDir: async ({}, use) => {
    // Inside a parent of its own, removed with it: tests put files "outside the state directory" there.
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-e2e-"));
    const dir = path.join(parent, "state");
    fs.mkdirSync(dir);
    // A folder reqwatch manages, as one it created (tests of another program's folder make their own).
    adoptStateDir(dir);
    await use(dir);
    fs.rmSync(parent, { recursive: true, force: true });
  },

  recording: async ({ stateDir }, use) => {
    const recording = openRoles({ stateDir, cacheDir: path.join(path.dirname(stateDir), "cache") });
    await use(recording);
    recording.close();
  },
  tracker: async ({ recording }, use) => use(recording.tracker),
  reader: async ({ recording }, use) => use(recording.reader),
  operator: async ({ recording }, use) => use(recording.operator),

  launchApp: async ({ stateDir, appEnv }, use) => {
    const servers: ChildProcess[] = [];
    await use(async (env = {}) => {
      // No OTLP receiver unless a test asks for one: tests run one server after another, and 4318 may be the machine's own collector.
      // Nor the machine's own ~/.claude read: a test that wants Claude Code's files names their folder.
      const serverEnv = {
        NEXT_TELEMETRY_DISABLED: "1",
        ...process.env,
        REQWATCH_OTLP_PORT: "off",
        REQWATCH_AGENT_FILES: "off",
        REQWATCH_CACHE_DIR: path.join(path.dirname(stateDir), "cache"),
        REQWATCH_STATE_DIR: stateDir,
        ...appEnv,
        ...env,
      };
      for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        let output = "";
        const server = spawn(process.execPath, [path.join(ROOT, "dist/server.cjs"), "--hostname", "127.0.0.1", "--port", String(port)], {
          cwd: ROOT,
          // The index of an observed folder goes beside the test's state directory, not under ~/.cache.
          // `env` may name another state directory (a folder another program writes).
          env: serverEnv,
          stdio: ["ignore", "pipe", "pipe"],
        });
        servers.push(server);
        server.stdout?.on("data", (chunk) => (output += chunk));
        server.stderr?.on("data", (chunk) => (output += chunk));
        const url = `http://127.0.0.1:${port}`;
        const started = await waitForHealth(`${url}/api/health`, path.resolve(serverEnv.REQWATCH_STATE_DIR), server, () => output);
        if (started === "port taken" && attempt < 5) continue;
        if (started === "port taken") throw new Error(`five free ports were taken before the server could listen:\n${output}`);
        // The receiver a test asked for listens once the server has taken the telemetry lease, a moment
        // after the pages answer: a test sends to it only then.
        const otlpPort = Number(serverEnv.REQWATCH_OTLP_PORT);
        if (Number.isInteger(otlpPort) && otlpPort > 0) await waitForListening(otlpPort, server, () => output);
        const kill = async () => {
          if (server.exitCode !== null || server.signalCode !== null) return;
          const exited = new Promise((resolve) => server.on("exit", resolve));
          server.kill("SIGKILL");
          await exited;
        };
        return { url, kill };
      }
    });
    for (const server of servers) {
      if (server.exitCode !== null || server.signalCode !== null) continue;
      server.kill("SIGTERM");
      await new Promise((resolve) => server.on("exit", resolve));
    }
  },

  app: async ({ launchApp }, use) => {
    await use(await launchApp());
  },

  baseURL: async ({ app }, use) => {
    await use(app.url);
  },
});

/**
 * The per-launch action token, as the dashboard's own code sends it: the page is rendered with it,
 * and its dialogs put it in the action token header. A cleanup's dry run (which changes nothing)
 * is the action the requests page offers once there is a request (an empty one offers none).
 */
export async function actionToken(page: Page, url: string): Promise<string> {
  await page.goto(`${url}/requests`);
  await page.getByRole("button", { name: "Clean up…" }).click();
  const [dryRun] = await Promise.all([
    page.waitForRequest((request) => new URL(request.url()).pathname === "/api/actions/dry-run"),
    page.getByRole("button", { name: "Dry run" }).click(),
  ]);
  const token = dryRun.headers()["x-reqwatch-token"];
  if (!token) throw new Error("the page sent no action token");
  return token;
}

export { expect };

/** Resolves once something listens on `port` on 127.0.0.1; throws if the server exits first or a minute passes. */
async function waitForListening(port: number, server: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const listening = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (listening) return;
    if (server.exitCode !== null || server.signalCode !== null) throw new Error(`the server exited before its receiver listened on ${port}:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`nothing listened on ${port} within a minute:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
