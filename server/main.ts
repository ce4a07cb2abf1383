// The dashboard server: `npm start` runs it (scripts/start.mjs), bundled as dist/server.cjs.
//   node dist/server.cjs --hostname 127.0.0.1 --port 4600 [--dev]
// The state directory comes from REQWATCH_STATE_DIR (and the other REQWATCH_* settings), as for the CLI.
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import next from "next";
import { dashboardListener } from "../lib/dashboard/dashboardListener";
import { closeRuntime, getRuntime } from "../lib/dashboard/runtime";

const USAGE = "Usage: node dist/server.cjs --hostname HOST --port N [--dev]";
// dist/server.cjs: the project is the folder above.
const ROOT = path.resolve(__dirname, "..");

function fail(message: string): never {
  console.error(`reqwatch: ${message}\n${USAGE}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({ options: { hostname: { type: "string", default: "127.0.0.1" }, port: { type: "string" }, dev: { type: "boolean", default: false } } }));
  } catch (error) {
    fail((error as Error).message);
  }
  const port = Number(values.port);
  if (!values.port || !Number.isInteger(port) || port < 1 || port > 65535) fail(`invalid port "${values.port ?? ""}".`);
  process.title = "reqwatch-server";

  const app = next({ dev: values.dev, dir: ROOT, hostname: values.hostname, port });
  await app.prepare();
  // Open the state directory before listening, so the stuck monitor and the watcher run from the
  // start, not from the first page anyone opens, and the recovery notice describes the server's own
  // start. After Next's start-up: its module loading is not the event-loop delay that /api/health
  // reports.
  try {
    const { tracker } = getRuntime();
    if (tracker.ownership.access === "observed") console.log(`reqwatch: observing ${tracker.stateDir.root} read-only: ${tracker.ownership.reason}. Actions are off; to allow them, ${tracker.ownership.toWrite} and restart the dashboard.`);
  } catch (error) {
    // Every page and route reports it (and retries) on its next request; the server still starts.
    console.error("reqwatch: could not open the state directory at start:", (error as Error).message);
  }
  const server = http.createServer(dashboardListener(getRuntime, app.getRequestHandler()));
  // In development, the browser's hot reload connects by WebSocket.
  if (values.dev) server.on("upgrade", app.getUpgradeHandler());
  server.on("error", (error: NodeJS.ErrnoException) => {
    console.error(error.code === "EADDRINUSE" ? `reqwatch: port ${port} is in use; pick another with --port.` : `reqwatch: the server failed: ${error.message}`);
    process.exit(1);
  });
  server.listen(port, values.hostname, () => console.log(`reqwatch: dashboard on http://${values.hostname!.includes(":") ? `[${values.hostname}]` : values.hostname}:${port}/`));

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      // Every write is already durable: closing only stops the watchers and the monitor in order.
      closeRuntime();
      process.exit(0);
    });
  }
}

void main().catch((error: unknown) => {
  console.error("reqwatch: the server could not start:", error);
  process.exit(1);
});
