// `npm run demo`: the dashboard on a fresh temporary state directory, with a simulated gateway
// and workers (scripts/demo/), so every feature shows within 30 seconds: live rows, retries,
// failures, a request hanging past its deadline, crashed workers, stuck queued requests, and
// sessions with their recorded context.
//   npm run demo -- --port 4601 --keep
import "./lib/supportedNode.mjs";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { ROOT, ensureBuild } from "./build-if-stale.mjs";

/** The dashboard's port when none is named. */
const DEFAULT_PORT = 4600;
// Short thresholds, so stuck requests and crash recovery show in seconds, not minutes; the environment's win.
const THRESHOLDS = { REQWATCH_QUEUED_STUCK_AFTER: "15s", REQWATCH_HEARTBEAT_TIMEOUT: "6s", REQWATCH_MONITOR_INTERVAL: "2s" };

const USAGE = `Usage: npm run demo -- [--port <port>] [--keep]

The dashboard on a fresh state directory under the temporary folder (TMPDIR), with a simulated
gateway and three workers; Ctrl-C stops them all and removes the folder.

Options:
  --port <port>  the dashboard's port (default: REQWATCH_PORT, else 4600 or the next free one)
  --keep         keep the state directory when the demo stops (its path is printed)
  -h, --help     print this and exit

Its thresholds are short, so stuck requests show in seconds; set these to change them:
  ${Object.entries(THRESHOLDS)
    .map(([name, value]) => `${name} (default ${value})`)
    .join(", ")}`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      port: { type: "string", default: process.env.REQWATCH_PORT },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  console.error(`demo: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.port !== undefined && (!/^\d{1,5}$/.test(values.port) || Number(values.port) < 1 || Number(values.port) > 65535)) {
  console.error(`demo: --port ${JSON.stringify(values.port)} is not a port (1 to 65535)`);
  process.exit(2);
}
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-demo-"));
const env = { ...THRESHOLDS, ...process.env, NEXT_TELEMETRY_DISABLED: "1", REQWATCH_STATE_DIR: stateDir };

ensureBuild();
const internal = createRequire(import.meta.url)("../dist/internal.cjs");
// reqwatch's own folder (the dashboard observes an empty folder it did not make).
internal.adoptStateDir(stateDir);
// A port the user named is used as given (the dashboard fails if it is taken); the default moves to the next free one.
let port = values.port;
if (port === undefined) {
  const free = await internal.firstFreePort(DEFAULT_PORT, "127.0.0.1");
  if (free === null) {
    console.error(`demo: ports ${DEFAULT_PORT} to ${DEFAULT_PORT + internal.PORTS_TRIED - 1} are all in use; pick another with --port`);
    fs.rmSync(stateDir, { recursive: true, force: true });
    process.exit(1);
  }
  if (free !== DEFAULT_PORT) console.log(`demo: ${DEFAULT_PORT} in use: serving on http://127.0.0.1:${free}/`);
  port = String(free);
}
const children = new Set();
let stopping = false;

function run(name, args, { restart = false } = {}) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "inherit", "inherit"] });
  children.add(child);
  child.on("exit", (code, signal) => {
    children.delete(child);
    if (stopping) {
      if (!children.size) finish();
      return;
    }
    if (restart) {
      console.log(`demo: ${name} ${signal === "SIGKILL" ? "crashed (as the demo intends)" : `exited (${code ?? signal})`}; starting another`);
      // Not once the demo stops: a worker started then would outlive it.
      setTimeout(() => stopping || run(name, args, { restart }), 1000);
    } else {
      console.error(`demo: ${name} exited (${code ?? signal}); stopping`);
      stop(1);
    }
  });
  return child;
}

let exitCode = 0;
let forceTimer = null;

/** Stop every child; the folder goes (unless --keep) once they have all exited, so nothing the demo started outlives it. */
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  for (const child of children) child.kill("SIGTERM");
  forceTimer = setTimeout(() => {
    for (const child of children) child.kill("SIGKILL");
  }, 5000);
  if (!children.size) finish();
}

function finish() {
  clearTimeout(forceTimer);
  if (!values.keep) fs.rmSync(stateDir, { recursive: true, force: true });
  else console.log(`demo: state directory kept at ${stateDir}`);
  process.exit(exitCode);
}

console.log(`demo: state directory ${stateDir}`);
// The demo's thresholds are not the defaults: a command run on its folder needs the same to agree with its pages.
const settings = Object.keys(THRESHOLDS)
  .map((name) => `${name}=${env[name]}`)
  .join(" ");
console.log(`demo: thresholds ${settings} (the Health page shows them); the CLI on this folder: ${settings} npx reqwatch queues --state-dir ${stateDir}`);
run("dashboard", [path.join(ROOT, "dist/server.cjs"), "--hostname", "127.0.0.1", "--port", port]);
run("gateway", [path.join(ROOT, "scripts/demo/gateway.cjs"), stateDir]);
for (const workspace of ["gateway-eu", "gateway-us", "batch"])
  run(`worker (${workspace})`, [path.join(ROOT, "scripts/demo/worker.cjs"), stateDir, workspace], { restart: true });
console.log(`demo: dashboard on http://127.0.0.1:${port}/ (Ctrl-C stops everything)`);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => stop(0));
