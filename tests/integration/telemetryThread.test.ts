import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TelemetryStatus } from "../../lib/telemetry/startTelemetry";
import { exportsOf } from "../helpers/claudeCodeExports";
import { childEnv, eventually, freePort, waitForExit, waitForLine } from "../helpers/processes";
import { tempStateDir } from "../helpers/stateDir";

const SERVER = path.resolve(__dirname, "../../dist/server.cjs");
const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** The dashboard server as `reqwatch dashboard` runs it, receiving on `otlpPort`; resolves once both listen. */
async function aServer(stateDir: string, port: number, otlpPort: number): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [SERVER, "--hostname", "127.0.0.1", "--port", String(port)], {
    env: { ...childEnv(), NEXT_TELEMETRY_DISABLED: "1", REQWATCH_STATE_DIR: stateDir, REQWATCH_OTLP_PORT: String(otlpPort) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  const url = `http://127.0.0.1:${port}`;
  await Promise.all([
    waitForLine(child, `reqwatch: receiving OpenTelemetry (OTLP/HTTP) on http://127.0.0.1:${otlpPort}`),
    waitForLine(child, `dashboard on ${url}/`),
  ]);
  return { child, url };
}

const receivedTurns = async (url: string) =>
  ((await (await fetch(`${url}/api/requests?source=otel&limit=50`)).json()) as { items: { requestId: string; state: string; source: string }[] }).items;

describe("the dashboard's receiver, on a thread of its own", () => {
  it("keeps what Claude Code exports, shows it to the pages and the health page, closes with the server and frees its port", async () => {
    const stateDir = tempStateDir();
    const [port, otlpPort] = [await freePort(), await freePort()];
    const first = await aServer(stateDir, port, otlpPort);
    for (const item of exportsOf("tool-protobuf")) {
      const response = await fetch(`http://127.0.0.1:${otlpPort}/v1/${item.signal}`, {
        method: "POST",
        body: new Uint8Array(item.body),
        headers: { "content-type": "application/x-protobuf" },
      });
      expect(response.status).toBe(200);
    }
    const turns = await eventually(async () => ((await receivedTurns(first.url)).length ? receivedTurns(first.url) : undefined));
    expect(turns).toEqual([expect.objectContaining({ state: "completed", source: "otel" })]);
    const health = (await (await fetch(`${first.url}/api/health`)).json()) as { telemetry: TelemetryStatus };
    expect(health.telemetry.receiver).toEqual({ url: `http://127.0.0.1:${otlpPort}`, error: null });
    expect(health.telemetry.intake.map((row) => [row.signal, row.exports])).toEqual([
      ["logs", 1],
      ["metrics", 1],
      ["traces", 1],
    ]);
    expect(health.telemetry.usage.byDayAndModel.reduce((calls, row) => calls + row.calls, 0)).toBeGreaterThan(0);

    first.child.kill("SIGTERM");
    expect(await waitForExit(first.child)).toBe(0);
    // The thread closed its receiver and its store: the next server listens on the same port and shows what was kept.
    const second = await aServer(stateDir, port, otlpPort);
    expect(await receivedTurns(second.url)).toEqual([expect.objectContaining({ requestId: turns[0]!.requestId, state: "completed" })]);
  }, 60_000);
});
