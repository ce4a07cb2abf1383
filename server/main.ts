// The dashboard server, bundled as dist/server.cjs: `reqwatch dashboard` runs it (and `npm start`
// through it).
//   node dist/server.cjs --hostname 127.0.0.1 --port 4600 [--dev]
// The state directory comes from REQWATCH_STATE_DIR (and the other REQWATCH_* settings), as for the CLI.
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { dashboardListener } from "../lib/dashboard/dashboardListener";
import { closeRuntime, getRuntime } from "../lib/dashboard/runtime";
import { startOtelChild } from "../lib/dashboard/otelChild";
import { trackingEnabled } from "../lib/store/options";
import { isReqwatchError } from "../lib/model/errors";
import { flagSetting } from "../lib/model/flag";
import { noteTrackingOff } from "../lib/disabledTracker";
import { unpackedDashboard } from "./unpackDashboard";

const USAGE = "Usage: node dist/server.cjs --hostname HOST --port N [--dev]";

interface Dashboard {
  /** The folder whose .next holds the build, and from which `next` is loaded. */
  readonly dir: string;
  /** Next.js's settings as the build recorded them; null in development, where next.config.mjs is read. */
  readonly config: Record<string, unknown> | null;
}

/**
 * Where the pages are built. In a clone of the repository: the project's own .next (`npm run build`),
 * run with the project's Next.js. In the installed package: dist/dashboard, Next.js's standalone
 * output with the modules it needs (scripts/package-dashboard.mjs), so the user installs no framework.
 * Both run as Next's own standalone server does, with the settings the build recorded.
 */
function locateDashboard(dev: boolean): Dashboard {
  const project = path.resolve(__dirname, "..");
  const inRepository = fs.existsSync(path.join(project, "next.config.mjs"));
  let dir = project;
  if (!dev && !inRepository) {
    try {
      dir = unpackedDashboard(path.join(__dirname, "dashboard.tar.gz"));
    } catch (error) {
      fail(`${(error as Error).message}; reinstall reqwatch.`, false);
    }
  }
  if (dev) return { dir, config: null };
  try {
    const required = JSON.parse(fs.readFileSync(path.join(dir, ".next", "required-server-files.json"), "utf8")) as { config: Record<string, unknown> };
    // Each page's modules load on its first request rather than all before the server listens: a start
    // on a big folder shows its first page sooner. Set here, not in next.config.mjs, where the build
    // lists it as "⨯ preloadEntriesOnStart", which reads as an error.
    const experimental = { ...(required.config.experimental as Record<string, unknown> | undefined), preloadEntriesOnStart: false };
    return { dir, config: { ...required.config, experimental } };
  } catch (error) {
    fail(
      `no dashboard build in ${path.join(dir, ".next")} (${(error as Error).message}); ${inRepository ? "run `npm run build`" : "reinstall reqwatch"}.`,
      false,
    );
  }
}

/** Exit 2 with one line; the server's own usage only for a mistake in its arguments (`reqwatch dashboard` passes them, a person rarely does). */
function fail(message: string, usage = true): never {
  console.error(usage ? `reqwatch: ${message}\n${USAGE}` : `reqwatch: ${message}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: { hostname: { type: "string", default: "127.0.0.1" }, port: { type: "string" }, dev: { type: "boolean", default: false } },
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  const port = Number(values.port);
  if (!values.port || !Number.isInteger(port) || port < 1 || port > 65535) fail(`invalid port "${values.port ?? ""}".`);
  process.title = "reqwatch-server";
  // `npm start` with tracking off: what `reqwatch dashboard` does, say so and serve nothing (there is nothing recorded to show).
  if (!trackingEnabled()) {
    noteTrackingOff();
    process.exit(0);
  }

  const dashboard = locateDashboard(values.dev!);
  // Open the state directory before listening, so the stuck monitor and the watcher run from the
  // start, not from the first page anyone opens, and the recovery notice describes the server's own
  // start; and before Next.js is even loaded, so that a folder opened for the first time is being
  // indexed (on its own thread) while Next loads. The event loop's delay that /api/health reports
  // counts from the listening on (runtime.serving below), not Next's module loading.
  try {
    const runtime = getRuntime();
    const { reader } = runtime;
    if (flagSetting(process.env, "REQWATCH_OTEL")) {
      // A `reqwatch otel` of its own (bin/reqwatch.js beside dist/): it says what it exports, and where, on this output.
      runtime.attachExport(
        startOtelChild(path.resolve(__dirname, "../bin/reqwatch.js"), reader.stateDir.root, (code, restartInMs) =>
          console.error(`reqwatch: the OpenTelemetry exporter ended (exit code ${code ?? "none"}); starting it again in ${Math.round(restartInMs / 1000)} s`),
        ),
      );
    }
    if (reader.ownership.access === "observed")
      console.log(
        `reqwatch: observing ${reader.stateDir.root} read-only: ${reader.ownership.reason}. Actions are off; to allow them, ${reader.ownership.toWrite} and restart the dashboard.`,
      );
  } catch (error) {
    // A setting that is wrong stays wrong: say so and stop, rather than serve pages that fail.
    if (isReqwatchError(error, "BAD_INPUT")) {
      console.error(`reqwatch: ${error.message}`);
      process.exit(2);
    }
    // So does an SQLite that cannot load: nothing would work until it is fixed and the server restarted.
    if (isReqwatchError(error, "NO_SQLITE")) {
      console.error(`reqwatch: ${error.message}`);
      process.exit(1);
    }
    // Every page and route reports it (and retries) on its next request; the server still starts.
    console.error("reqwatch: could not open the state directory at start:", (error as Error).message);
  }
  // In the package the pages run from the cache folder (server/unpackDashboard.ts), where
  // `better-sqlite3` does not resolve: the build's one-line stub for it (scripts/package-dashboard.mjs)
  // takes this process's copy.
  (globalThis as Record<symbol, unknown>)[Symbol.for("reqwatch.external.better-sqlite3")] = Database;
  if (dashboard.config) {
    // What Next.js's own standalone server.js does: the settings come from the build, not next.config.mjs.
    process.env.__NEXT_PRIVATE_STANDALONE_CONFIG = JSON.stringify(dashboard.config);
  }
  // Loaded from the dashboard's folder: the package's own copy of Next.js, not one the user's project may have.
  const nextRequire = createRequire(path.join(dashboard.dir, "server.cjs"));
  const nextModule = nextRequire("next") as typeof import("next") & { default?: typeof import("next").default };
  if (!values.dev) await readNextSettingsQuietly(nextRequire, dashboard.dir);
  const next = nextModule.default ?? (nextModule as unknown as typeof import("next").default);
  const app = next({ dev: values.dev, dir: dashboard.dir, hostname: values.hostname, port, ...(dashboard.config && { conf: dashboard.config }) });
  await app.prepare();
  const server = http.createServer(dashboardListener(getRuntime, app.getRequestHandler()));
  // In development, the browser's hot reload connects by WebSocket.
  if (values.dev) server.on("upgrade", app.getUpgradeHandler());
  server.on("error", (error: NodeJS.ErrnoException) => {
    console.error(
      error.code === "EADDRINUSE" ? `reqwatch: port ${port} is in use; pick another with --port.` : `reqwatch: the server failed: ${error.message}`,
    );
    process.exit(1);
  });
  server.listen(port, values.hostname, () => {
    console.log(`reqwatch: dashboard on http://${values.hostname!.includes(":") ? `[${values.hostname}]` : values.hostname}:${port}/`);
    try {
      getRuntime().serving();
    } catch {
      // Not open: reported above, and by every page.
    }
  });

  const stop = () => {
    // Every write is already durable: closing only stops the watchers and the monitor in order.
    closeRuntime();
    process.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, stop);
  // Started by `reqwatch dashboard` with a channel to it: when that process is gone, however it died, so is the server.
  if (process.send) process.once("disconnect", stop);
}

void main().catch((error: unknown) => {
  console.error("reqwatch: the server could not start:", error);
  process.exit(1);
});

/**
 * Next.js's router reads the build's settings on start and, when that read is not cached, logs
 * "✓ Running next.config took 2ms" (on every start: its cache is per process). The same read made
 * first, silently, fills that cache.
 */
async function readNextSettingsQuietly(nextRequire: NodeJS.Require, dir: string): Promise<void> {
  const { default: loadConfig } = nextRequire("next/dist/server/config") as {
    default: (phase: string, dir: string, options: { silent: boolean }) => Promise<unknown>;
  };
  // The module Next.js's own server loads: a standalone build carries it, not the package's `next/constants`.
  const { PHASE_PRODUCTION_SERVER } = nextRequire("next/dist/shared/lib/constants") as { PHASE_PRODUCTION_SERVER: string };
  await loadConfig(PHASE_PRODUCTION_SERVER, dir, { silent: true });
}
