import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { childEnv, eventually, waitForExit, withOutput } from "../helpers/processes";
import { tempStateDir } from "../helpers/stateDir";

// A second dashboard, or `npm run demo` beside `npm start`, on the default port 4600 while another
// holds it: it serves on the next free port and its start says which. A port the user named is not moved.
const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");
const DEMO = path.resolve(__dirname, "../../scripts/demo.mjs");
const DEFAULT_PORT = 4600;
const running: ChildProcess[] = [];
const held: net.Server[] = [];
afterEach(async () => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const server of held.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** 4600 taken, as `npm start`'s dashboard takes it: held here unless something on the machine holds it already. */
async function takeDefaultPort(): Promise<void> {
  const server = net.createServer();
  const taken = await new Promise<boolean>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" ? resolve(false) : reject(error)));
    server.listen(DEFAULT_PORT, "127.0.0.1", () => resolve(true));
  });
  if (taken) held.push(server);
}

/** The environment without a port named: the default one is used. */
function withoutPort(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...childEnv(), NEXT_TELEMETRY_DISABLED: "1", ...extra };
  delete env.REQWATCH_PORT;
  delete env.PORT;
  return env;
}

/** The port a start line says it moved to, once it has said so. */
const movedTo = (child: { output: () => string }, prefix: string) =>
  eventually(
    () => {
      const match = new RegExp(`${prefix}: ${DEFAULT_PORT} in use: serving on http://127\\.0\\.0\\.1:(\\d+)/`).exec(child.output());
      return match ? Number(match[1]) : undefined;
    },
    60_000,
    50,
  );

/** Once a process has printed `line`. */
const said = (child: { output: () => string }, line: string) => eventually(() => (child.output().includes(line) ? true : undefined), 60_000, 50);

const answers = (port: number) =>
  eventually(async () => ((await fetch(`http://127.0.0.1:${port}/api/status`).catch(() => null))?.ok ? true : undefined), 90_000, 100);

describe("the dashboard's default port, taken", () => {
  it("reqwatch dashboard serves on the next free port and says which; with --port 4600 named, it fails as before", async () => {
    await takeDefaultPort();
    const moved = withOutput(
      spawn(process.execPath, [BIN, "dashboard"], { env: withoutPort({ REQWATCH_STATE_DIR: tempStateDir() }), stdio: ["ignore", "pipe", "pipe"] }),
    );
    running.push(moved);
    const port = await movedTo(moved, "reqwatch");
    expect(port).toBeGreaterThan(DEFAULT_PORT);
    expect(await answers(port)).toBe(true);
    await said(moved, `reqwatch: dashboard on http://127.0.0.1:${port}/`);

    const named = withOutput(
      spawn(process.execPath, [BIN, "dashboard", "--port", String(DEFAULT_PORT)], {
        env: withoutPort({ REQWATCH_STATE_DIR: tempStateDir() }),
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    running.push(named);
    expect(await waitForExit(named)).toBe(1);
    expect(named.output()).toContain(`reqwatch: port ${DEFAULT_PORT} is in use; pick another with --port.`);
    expect(named.output()).not.toContain("in use: serving on");
  }, 120_000);

  it("npm run demo beside a dashboard on 4600 serves on the next free port and says which", async () => {
    await takeDefaultPort();
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-demo-port-"));
    try {
      const demo = withOutput(
        spawn(process.execPath, [DEMO], { env: withoutPort({ TMPDIR: tmp, REQWATCH_OTLP_PORT: "off" }), stdio: ["ignore", "pipe", "pipe"] }),
      );
      running.push(demo);
      const port = await movedTo(demo, "demo");
      await said(demo, `demo: dashboard on http://127.0.0.1:${port}/ (Ctrl-C stops everything)`);
      expect(await answers(port)).toBe(true);
      demo.kill("SIGINT");
      expect(await waitForExit(demo)).toBe(0);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 120_000);
});
