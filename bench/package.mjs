// `BENCH_ONLY=package`: the packed package as a user meets it, on the Node running the bench.
// `npm install <tarball>` into an empty project, beside installing better-sqlite3 alone (the one
// native dependency) into another, taking turns, from the same warm npm cache; then `npx reqwatch
// dashboard` from the command to the first page answered, beside the floor every npx command pays
// (`npx reqwatch --version`).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pack } from "../scripts/package.mjs";
import { freePort } from "./server.mjs";

const STARTS = 7;
const INSTALLS = 5;

/** An empty project in `where`, and how long `npm install <spec>` took there; throws if anything was compiled. */
function timedInstall(where, label, spec) {
  const project = fs.mkdtempSync(path.join(where, `${label}-`));
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "a-gateway", version: "1.0.0", private: true }));
  const started = performance.now();
  const installed = spawnSync("npm", ["install", "--no-audit", "--no-fund", spec], { cwd: project, encoding: "utf8" });
  const ms = performance.now() - started;
  if (installed.status !== 0) throw new Error(`npm install ${spec} failed:\n${installed.stderr}`);
  if (fs.existsSync(path.join(project, "node_modules/better-sqlite3/build"))) throw new Error(`npm install ${spec} compiled better-sqlite3`);
  return { project, ms };
}

async function firstPageMs(project, cacheDir) {
  const port = await freePort();
  const started = performance.now();
  // Its own process group: npx, the CLI and the server stop together, as with Ctrl-C.
  const dashboard = spawn("npx", ["--no-install", "reqwatch", "dashboard", "--port", String(port)], {
    cwd: project,
    detached: true,
    stdio: "ignore",
    env: { ...process.env, REQWATCH_CACHE_DIR: cacheDir },
  });
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

export async function measurePackage({ ROOT, summarize, ratio, median }) {
  console.log("\npacking reqwatch and installing it into empty projects...");
  const where = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-bench-package-"));
  try {
    const packed = pack({ destination: where });
    console.log(`packed ${(packed.size / 1e6).toFixed(2)} MB (${(packed.unpackedSize / 1e6).toFixed(1)} MB unpacked, ${packed.files.length} files)`);
    const betterSqlite3 = `better-sqlite3@${JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules/better-sqlite3/package.json"), "utf8")).version}`;
    // One of each first, unmeasured: both then come from the same warm npm cache.
    timedInstall(where, "warm", betterSqlite3);
    const { project } = timedInstall(where, "warm", packed.path);
    const installs = { reqwatch: [], alone: [] };
    for (let i = 0; i < INSTALLS; i++) {
      installs.alone.push(timedInstall(where, "alone", betterSqlite3).ms);
      installs.reqwatch.push(timedInstall(where, "reqwatch", packed.path).ms);
    }
    summarize(`npm install ${betterSqlite3} alone (empty project)`, installs.alone);
    summarize("npm install reqwatch's tarball (empty project; nothing compiled)", installs.reqwatch);
    ratio("npm install of the tarball / better-sqlite3 alone", median(installs.reqwatch) / median(installs.alone), { target: "<= 2" });

    const floor = [];
    for (let i = 0; i < STARTS; i++) {
      const started = performance.now();
      spawnSync("npx", ["--no-install", "reqwatch", "--version"], { cwd: project, stdio: "ignore" });
      floor.push(performance.now() - started);
    }
    summarize("npx reqwatch --version (the floor of any npx command)", floor);
    // The first start on a machine unpacks the dashboard into the cache folder (server/unpackDashboard.ts); the others reuse it.
    const cacheDir = path.join(where, "cache");
    summarize("npx reqwatch dashboard: first start, unpacking the dashboard", [await firstPageMs(project, cacheDir)]);
    const samples = [];
    for (let i = 0; i < STARTS; i++) samples.push(await firstPageMs(project, cacheDir));
    summarize("npx reqwatch dashboard: command to first page (packed)", samples, { target: "p50 <= 1500 ms" });
  } finally {
    fs.rmSync(where, { recursive: true, force: true });
  }
}
