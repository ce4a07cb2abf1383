// `node scripts/under-load.mjs`: `npm test` on a busy machine. Two busy processes (each one CPU-bound
// loop at normal priority) run beside it, so a test that passes only on an idle machine fails here.
// Any other command to run beside them can follow (`node scripts/under-load.mjs npx vitest run <file>`).
// The exit code is the command's (128 + the signal's number if a signal ended it); the busy processes
// end with this script however it ends: a signal it can catch stops them, and each one also ends by
// itself when its stdin, a pipe from this script, closes (as when this script is killed outright).
import { spawn } from "node:child_process";
import os from "node:os";

const BUSY_PROCESSES = 2;
// The loop runs in a worker thread, so the main thread stays free to see its stdin close.
const BUSY = `new (require("node:worker_threads").Worker)("for (;;) {}", { eval: true });
process.stdin.on("end", () => process.exit(0)).resume();`;

const [command, ...args] = process.argv.length > 2 ? process.argv.slice(2) : ["npm", "test"];
const busy = [];
let run = null;

function stopBusy() {
  for (const child of busy) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

// Before anything is started, so that no signal finds the script without its handler. Ctrl-C reaches
// the whole foreground group; a signal sent to this script alone is passed on, and the script ends
// when the command has (or at once, if the command had not started).
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    stopBusy();
    if (!run) process.exit(128 + os.constants.signals[signal]);
    if (run.exitCode === null && run.signalCode === null) run.kill(signal);
  });
}

for (let i = 0; i < BUSY_PROCESSES; i++) busy.push(spawn(process.execPath, ["-e", BUSY], { stdio: ["pipe", "ignore", "inherit"] }));
process.stderr.write(`under-load: ${busy.length} busy processes (pids ${busy.map((child) => child.pid).join(", ")}) beside: ${[command, ...args].join(" ")}\n`);
run = spawn(command, args, { stdio: "inherit" });
run.on("error", (error) => {
  stopBusy();
  process.stderr.write(`under-load: cannot run ${command}: ${error.message}\n`);
  process.exit(127);
});
run.on("exit", (code, signal) => {
  stopBusy();
  process.exit(code ?? 128 + os.constants.signals[signal]);
});
