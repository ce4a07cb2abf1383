// The README's commands (npm install's build, npm start, npm test, npm run demo) run on the Node the
// project is tested on whatever Node the machine has: on an older one, the script runs itself again
// on the pinned line (scripts/node.sh installs it into .toolchain/ the first time) and says so in one
// line. Imported first by each such script, so nothing else of it runs on the old Node; it must parse
// there (Node 18 and up), and so must every module the script imports.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const { unsupportedNode, minimumNode } = require("../../bin/supported-node.cjs");
const NODE_SH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "node.sh");

if (unsupportedNode()) {
  process.stderr.write(
    `reqwatch: this is Node.js ${process.versions.node} and the project needs ${minimumNode} or newer: running on the pinned Node from .toolchain/ (scripts/node.sh, fetched from the npm registry the first time)\n`,
  );
  // node.sh exec puts the pinned node and npm first on PATH, so what the script starts runs on them too.
  const child = spawn("bash", [NODE_SH, "exec", "node", ...process.execArgv, process.argv[1], ...process.argv.slice(2)], { stdio: "inherit" });
  // Ctrl-C reaches the whole process group, the child too: this one only waits for it to finish.
  process.on("SIGINT", () => {});
  for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  const code = await new Promise((resolve) => child.on("exit", (status, signal) => resolve(status ?? (signal ? 1 : 0))));
  process.exit(code);
}
