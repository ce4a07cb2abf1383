// `npm start`: build the dashboard if needed, then serve it on 127.0.0.1 with `reqwatch dashboard`.
//   npm start -- --state-dir ../gateway/data/state --port 4600 --source claude-mem --otel
// `npm run dev`: the same server with Next.js in development mode (pages rebuilt on change; the
// server's own code, lib/ included, is rebuilt once at start).
// The options are `reqwatch dashboard`'s own, passed on as given: that command is their one
// definition (lib/cli/commands/dashboard.ts), so npm start takes each one it takes.
import "./lib/supportedNode.mjs";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT, ensureBuild } from "./build-if-stale.mjs";

const args = process.argv.slice(2);
const CLI = path.join(ROOT, "bin", "reqwatch.js");
// npm runs scripts from the package folder: the command runs where the user typed it, so a relative
// path means what they meant; the state directory it names by default is this project's ./.reqwatch.
const invokedFrom = process.env.INIT_CWD ?? process.cwd();
const dashboard = [CLI, "dashboard", "--default-state-dir", path.join(ROOT, ".reqwatch"), ...args];
const run = (extra, stdio) => spawnSync(process.execPath, [...dashboard, ...extra], { cwd: invokedFrom, stdio });

const dev = args.includes("--dev");
const buildLib = () => {
  const lib = spawnSync("npm", ["run", "build:lib"], { cwd: ROOT, stdio: "inherit" });
  if (lib.status !== 0) process.exit(lib.status ?? 1);
};
if (!fs.existsSync(path.join(ROOT, "dist", "cli.cjs"))) (dev ? buildLib : ensureBuild)();

if (args.includes("--help") || args.includes("-h")) {
  console.log("Usage: npm start -- [options]: the options of `reqwatch dashboard`, run once the dashboard is built.\n");
  process.exit(run([], "inherit").status ?? 1);
}
// Every option checked (a mistyped folder, a bad port or source) before anything is built.
const checked = run(["--check"], "inherit");
if (checked.status !== 0 || args.includes("--check")) process.exit(checked.status ?? 1);
if (dev) buildLib();
else ensureBuild();

const server = spawn(process.execPath, dashboard, { cwd: invokedFrom, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
