import { spawn } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { childEnv, eventually, freePort, waitForExit } from "../helpers/processes";
import { tempStateDir } from "../helpers/stateDir";

const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");

it("reqwatch dashboard: when the command's process dies, even by SIGKILL, its server stops too", async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api/status`;
  const command = spawn(process.execPath, [BIN, "dashboard", "--port", String(port)], {
    env: { ...childEnv(), REQWATCH_STATE_DIR: tempStateDir() },
    stdio: "ignore",
  });
  await eventually(async () => ((await fetch(url).catch(() => null))?.ok ? true : undefined), 60_000, 100);

  command.kill("SIGKILL");
  await waitForExit(command);
  // The server noticed its channel to the command close, and stopped listening.
  await eventually(async () => ((await fetch(url).catch(() => null)) === null ? true : undefined), 10_000, 100);
}, 90_000);

it("reqwatch dashboard with a setting that is wrong says which and exits 2, serving no pages that fail", async () => {
  for (const [settings, says] of [
    [{ REQWATCH_RETENTION: "bogus" }, 'Invalid REQWATCH_RETENTION: "bogus"'],
    [{ REQWATCH_REDACT_RAW: "nope" }, 'REQWATCH_REDACT_RAW: unknown field "nope"'],
    [{ REQWATCH_OTEL: "maybe" }, 'Invalid REQWATCH_OTEL: "maybe". Use 1, true, yes or on; or 0, false, no, off or empty.'],
    // `true` turns the export on as `1` does: its wrong endpoint is then refused before anything starts.
    [
      { REQWATCH_OTEL: "true", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318/v1/traces" },
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=collector:4318/v1/traces: not an http(s) URL",
    ],
  ] as const) {
    const port = await freePort();
    const command = spawn(process.execPath, [BIN, "dashboard", "--port", String(port)], {
      env: { ...childEnv(), REQWATCH_STATE_DIR: tempStateDir(), ...settings },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    command.stderr!.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => command.once("exit", resolve));
    expect({ code, says: stderr.includes(says) }, stderr).toEqual({ code: 2, says: true });
    expect(await fetch(`http://127.0.0.1:${port}/`).catch(() => null)).toBeNull();
  }
}, 90_000);
