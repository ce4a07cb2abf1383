import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import type { TrackerOptions } from "../../lib/types";
import { dashboardListener } from "../../lib/dashboard/dashboardListener";
import { openRuntime, type Runtime } from "../../lib/dashboard/runtime";
import type { TelemetrySettings } from "../../lib/telemetry/telemetrySettings";
import { sourcesFromEnv } from "../../lib/sources/liveSource";
import { openEvents } from "./sse";
import { tempStateDir } from "./stateDir";

const running: { server: http.Server; runtime: Runtime }[] = [];

afterEach(async () => {
  for (const { server, runtime } of running.splice(0)) {
    server.closeAllConnections(); // Event streams never end by themselves.
    await new Promise((resolve) => server.close(resolve));
    runtime.close();
  }
});

/**
 * The dashboard's listener on a real port over a real state directory (a fresh one unless named),
 * with the runtime the server runs (monitor, ingest, index guard, feed); "Next.js" is a stand-in
 * that records what reached it. Closed after the test.
 */
export async function aDashboard(
  options: TrackerOptions = {},
  telemetry: TelemetrySettings = { port: null, keepMs: 86_400_000, stuckAfterMs: 600_000 },
  scope: "test" | "file" = "test",
) {
  const runtime = openRuntime(
    { monitorIntervalMs: 60_000, ...options, stateDir: options.stateDir ?? tempStateDir() },
    sourcesFromEnv(process.env.REQWATCH_SOURCES),
    telemetry,
  );
  const passedOn: string[] = [];
  const server = http.createServer(
    dashboardListener(
      () => runtime,
      (request, response) => {
        passedOn.push(`${request.method} ${request.url}`);
        response.end("from next");
      },
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // A dashboard for a whole file's tests is closed by the file (`close`), not after each test.
  if (scope === "test") running.push({ server, runtime });
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await runtime.telemetry?.close();
    runtime.close();
  };
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  /** One raw request, so that the Host header can be anything. */
  const ask = (path: string, options: { method?: string; host?: string } = {}) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; json: <T>() => T }>((resolve, reject) => {
      const request = http.request(
        { host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: { Host: options.host ?? `127.0.0.1:${port}` }, setHost: false },
        (response) => {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk) => (text += chunk));
          response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, text, json: <T>() => JSON.parse(text) as T }));
        },
      );
      request.on("error", reject);
      request.end();
    });
  /** The event stream, read as a browser's EventSource would (tests/helpers/sse.ts). */
  const stream = (headers: Record<string, string> = {}, query = "") => openEvents(`${url}/api/events${query}`, headers);
  return { url, runtime, tracker: runtime.tracker, passedOn, ask, stream, close };
}
