// `npm run demo`: the dashboard on a fresh temporary state directory, with a simulated gateway
// and workers (scripts/demo/), so every feature shows within 30 seconds: live rows, retries,
// failures, a request hanging past its deadline, crashed workers, stuck queued requests, and
// sessions with their recorded context.
//   npm run demo -- --port 4601 --keep
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { ROOT, ensureBuild } from "./build-if-stale.mjs";

const { values } = parseArgs({ options: { port: { type: "string", default: process.env.REQWATCH_PORT ?? "4600" }, keep: { type: "boolean", default: false } } });
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-demo-"));
// Short thresholds, so stuck requests and crash recovery show in seconds, not minutes.
const env = {
  ...process.env,
  NEXT_TELEMETRY_DISABLED: "1",
  REQWATCH_STATE_DIR: stateDir,
  REQWATCH_QUEUED_STUCK_AFTER: process.env.REQWATCH_QUEUED_STUCK_AFTER ?? "15s",
  REQWATCH_HEARTBEAT_TIMEOUT: process.env.REQWATCH_HEARTBEAT_TIMEOUT ?? "6s",
  REQWATCH_MONITOR_INTERVAL: process.env.REQWATCH_MONITOR_INTERVAL ?? "2s",
};

ensureBuild();
// reqwatch's own folder (the dashboard observes an empty folder it did not make).
createRequire(import.meta.url)("../dist/index.cjs").adoptStateDir(stateDir);
const children = new Set();
let stopping = false;

function run(name, args, { restart = false } = {}) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "inherit", "inherit"] });
  children.add(child);
  child.on("exit", (code, signal) => {
    children.delete(child);
    if (stopping) return;
    if (restart) {
      console.log(`demo: ${name} ${signal === "SIGKILL" ? "crashed (as the demo intends)" : `exited (${code ?? signal})`}; starting another`);
      setTimeout(() => run(name, args, { restart }), 1000);
    } else {
      console.error(`demo: ${name} exited (${code ?? signal}); stopping`);
      stop(1);
    }
  });
  return child;
}

function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill("SIGTERM");
  setTimeout(() => {
    if (!values.keep) fs.rmSync(stateDir, { recursive: true, force: true });
    else console.log(`demo: state directory kept at ${stateDir}`);
    process.exit(code);
  }, 1500);
}

console.log(`demo: state directory ${stateDir}`);
// The demo's thresholds are not the defaults: a command run on its folder needs the same to agree with its pages.
const settings = ["REQWATCH_QUEUED_STUCK_AFTER", "REQWATCH_HEARTBEAT_TIMEOUT", "REQWATCH_MONITOR_INTERVAL"].map((name) => `${name}=${env[name]}`).join(" ");
console.log(`demo: thresholds ${settings} (the Health page shows them); the CLI on this folder: ${settings} npx reqwatch queues --state-dir ${stateDir}`);
run("dashboard", [path.join(ROOT, "dist/server.cjs"), "--hostname", "127.0.0.1", "--port", values.port]);
run("gateway", [path.join(ROOT, "scripts/demo/gateway.cjs"), stateDir]);
for (const workspace of ["gateway-eu", "gateway-us", "batch"]) run(`worker (${workspace})`, [path.join(ROOT, "scripts/demo/worker.cjs"), stateDir, workspace], { restart: true });
console.log(`demo: dashboard on http://127.0.0.1:${values.port}/ (Ctrl-C stops everything)`);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => stop(0));
