// `npm start`: build the dashboard if needed, then serve it on 127.0.0.1.
//   npm start -- --state-dir ../gateway/data/state --port 4600
// `npm run dev`: the same server with Next.js in development mode (pages rebuilt on change; the
// server's own code, lib/ included, is rebuilt once at start).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { ROOT, ensureBuild } from "./build-if-stale.mjs";

const DEFAULT_PORT = 4600;
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

const port = values.port ?? process.env.REQWATCH_PORT ?? process.env.PORT ?? String(DEFAULT_PORT);
if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
  console.error(`reqwatch: invalid port "${port}".\n${USAGE}`);
  process.exit(2);
}
const host = values.host ?? process.env.REQWATCH_HOST ?? "127.0.0.1";
if (!["127.0.0.1", "localhost", "::1"].includes(host)) {
  console.warn(`reqwatch: warning: serving on ${host}, not loopback. Anyone who can reach this address can read and change your requests.`);
}
// npm runs scripts from the package folder; a relative --state-dir means relative to where the user typed it.
const invokedFrom = process.env.INIT_CWD ?? process.cwd();
const stateDir = path.resolve(invokedFrom, values["state-dir"] ?? process.env.REQWATCH_STATE_DIR ?? path.join(ROOT, ".reqwatch"));
// Only the default folder is made here; a folder named that does not exist is most likely a typo.
if ((values["state-dir"] ?? process.env.REQWATCH_STATE_DIR) && !fs.existsSync(stateDir)) {
  console.error(`reqwatch: the state directory ${stateDir} does not exist. Check the path; to start a new one there, run \`mkdir -p ${stateDir} && npx reqwatch adopt --state-dir ${stateDir}\`.\n${USAGE}`);
  process.exit(2);
}

if (values.dev) {
  const lib = spawnSync("npm", ["run", "build:lib"], { cwd: ROOT, stdio: "inherit" });
  if (lib.status !== 0) process.exit(lib.status ?? 1);
} else {
  ensureBuild();
}
console.log(`reqwatch: state directory ${stateDir}`);
const server = spawn(process.execPath, [path.join(ROOT, "dist/server.cjs"), "--hostname", host, "--port", port, ...(values.dev ? ["--dev"] : [])], {
  cwd: ROOT,
  stdio: "inherit",
  env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env, REQWATCH_STATE_DIR: stateDir, ...(values["read-only"] && { REQWATCH_READ_ONLY: "1" }), ...(values["ipc-dir"] && { REQWATCH_IPC_DIR: path.resolve(invokedFrom, values["ipc-dir"]) }) },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
