// `npm start`: build the dashboard if needed, then serve it on 127.0.0.1 with `reqwatch dashboard`.
//   npm start -- --state-dir ../gateway/data/state --port 4600
// `npm run dev`: the same server with Next.js in development mode (pages rebuilt on change; the
// server's own code, lib/ included, is rebuilt once at start).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { ROOT, ensureBuild } from "./build-if-stale.mjs";

const USAGE = "Usage: npm start -- [--state-dir PATH] [--read-only] [--ipc-dir PATH] [--port N] [--host 127.0.0.1] [--dev]";

let values;
try {
  ({ values } = parseArgs({
    options: {
      "state-dir": { type: "string" },
      "read-only": { type: "boolean" },
      "ipc-dir": { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      dev: { type: "boolean" },
      help: { type: "boolean" },
    },
  }));
} catch (error) {
  console.error(`reqwatch: ${error.message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

// npm runs scripts from the package folder: a relative path means relative to where the user typed
// it, and the default state directory is this project's ./.reqwatch (the command runs from ROOT).
const invokedFrom = process.env.INIT_CWD ?? process.cwd();
const fromUser = (value) => path.resolve(invokedFrom, value);
const stateDir = values["state-dir"] ?? process.env.REQWATCH_STATE_DIR;

// A mistyped folder is reported by the dashboard command at once, with no build before it.
const mistyped = stateDir !== undefined && !fs.existsSync(fromUser(stateDir));
if (values.dev && !mistyped) {
  const lib = spawnSync("npm", ["run", "build:lib"], { cwd: ROOT, stdio: "inherit" });
  if (lib.status !== 0) process.exit(lib.status ?? 1);
} else if (!mistyped) {
  ensureBuild();
}

const args = [
  ...(stateDir ? ["--state-dir", fromUser(stateDir)] : []),
  "dashboard",
  ...(values["read-only"] ? ["--read-only"] : []),
  ...(values["ipc-dir"] ? ["--ipc-dir", fromUser(values["ipc-dir"])] : []),
  ...(values.port ? ["--port", values.port] : []),
  ...(values.host ? ["--host", values.host] : []),
  ...(values.dev ? ["--dev"] : []),
];
const dashboard = spawn(process.execPath, [path.join(ROOT, "bin", "reqwatch.js"), ...args], { cwd: ROOT, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => dashboard.kill(signal));
dashboard.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
