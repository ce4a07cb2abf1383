// `BENCH_ONLY=package`: `npx reqwatch dashboard` from the packed package installed into an empty
// project, as a user runs it: from the command to the first page answered. Beside it, in the same
// run, the floor every npx command pays: `npx reqwatch --version`.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./server.mjs";

const STARTS = 7;

async function firstPageMs(project) {
  const port = await freePort();
  const started = performance.now();
  // Its own process group: npx, the CLI and the server stop together, as with Ctrl-C.
  const dashboard = spawn("npx", ["--no-install", "reqwatch", "dashboard", "--port", String(port)], { cwd: project, detached: true, stdio: "ignore" });
  try {
    for (;;) {
      if (dashboard.exitCode !== null) throw new Error(`reqwatch dashboard exited (${dashboard.exitCode})`);
      const response = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
      if (response?.ok) {
        await response.text();
        return performance.now() - started;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    const exited = new Promise((resolve) => dashboard.once("exit", resolve));
    process.kill(-dashboard.pid, "SIGINT");
    await exited;
  }
}

export async function measurePackage({ ROOT, summarize }) {
  console.log("\npacking reqwatch and installing it into an empty project...");
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-if-stale.mjs")], { stdio: "inherit" });
  const where = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-bench-package-"));
  try {
    const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", where], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }))[0];
    const project = path.join(where, "project");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "a-gateway", version: "1.0.0", private: true }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", path.join(where, packed.filename)], { cwd: project, stdio: "ignore" });
    console.log(`packed ${(packed.size / 1e6).toFixed(2)} MB (${(packed.unpackedSize / 1e6).toFixed(1)} MB unpacked, ${packed.files.length} files)`);

    const floor = [];
    for (let i = 0; i < STARTS; i++) {
      const started = performance.now();
      spawnSync("npx", ["--no-install", "reqwatch", "--version"], { cwd: project, stdio: "ignore" });
      floor.push(performance.now() - started);
    }
    summarize("npx reqwatch --version (the floor of any npx command)", floor);
    const samples = [];
    for (let i = 0; i < STARTS; i++) samples.push(await firstPageMs(project));
    summarize("npx reqwatch dashboard: command to first page (packed)", samples, { target: "<= 3000 ms" });
  } finally {
    fs.rmSync(where, { recursive: true, force: true });
  }
}
