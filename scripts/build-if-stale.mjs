import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SOURCES = [
  "app",
  "components",
  "lib",
  "server",
  "public",
  "next.config.mjs",
  "rolldown.config.mjs",
  "package.json",
  "tsconfig.json",
  "scripts/package-dashboard.mjs",
];
// What `npm run build:lib` reads and what it writes (the CLI, the library with its types, the server).
const LIB_SOURCES = ["lib", "server", "bin", "rolldown.config.mjs", "package.json", "tsconfig.json", "scripts/plain-types.mjs"];
const LIB_OUTPUTS = [
  "dist/cli.cjs",
  "dist/index.cjs",
  "dist/index.d.ts",
  "dist/internal.cjs",
  "dist/server.cjs",
  "dist/telemetryThread.cjs",
  "dist/usageReaderThread.cjs",
];

function newestMtime(entry) {
  let stat;
  try {
    stat = fs.statSync(entry);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of fs.readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, name)));
  return newest;
}

/** True when there is no production build (the pages', the server's or the package's dashboard), or a source file changed after it was made. */
export function buildIsStale() {
  return isStale([".next/BUILD_ID", "dist/server.cjs", "dist/dashboard/.next/BUILD_ID"], SOURCES);
}

function isStale(outputs, sources, root = ROOT) {
  let built;
  try {
    built = Math.min(...outputs.map((file) => fs.statSync(path.join(root, file)).mtimeMs));
  } catch {
    return true;
  }
  return sources.some((source) => newestMtime(path.join(root, source)) > built);
}

/**
 * Why dist/ cannot be packed as it is (what the package carries is missing or older than its
 * sources), with the command that makes it; null when it can. A package test run alone would
 * otherwise install, and pass or fail on, an old build.
 */
export function packedBuildProblem(root = ROOT) {
  if (isStale(LIB_OUTPUTS, LIB_SOURCES, root))
    return "dist/ (the CLI, the library and its types) is missing or older than its sources: run `npm run build:lib`";
  if (isStale(["dist/dashboard/.next/BUILD_ID"], SOURCES, root))
    return "dist/dashboard (the prebuilt dashboard) is missing or older than its sources: run `npm run build`";
  return null;
}

/**
 * `npm run build:lib` only when dist/ is missing or older than its sources. npm runs `prepare` on
 * every `npx reqwatch` in this checkout (it installs the project into its npx cache as a link), and a
 * full rebuild there made the first command take seconds.
 */
export function ensureLib() {
  if (!isStale(LIB_OUTPUTS, LIB_SOURCES)) return;
  const result = spawnSync("npm", ["run", "build:lib"], { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** Run `npm run build` when the build is missing or stale (else `build:lib` when only dist/ is); exit with its code if it fails. */
export function ensureBuild({ log = console.log } = {}) {
  if (!buildIsStale()) return ensureLib();
  log("reqwatch: building the dashboard (a fresh clone, or its sources changed)...");
  // A local tool on a machine that may have no network: no telemetry.
  const result = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit", env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env } });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** True when the dashboard was never built here (a fresh clone): not when it is only older than its sources. */
function neverBuilt() {
  return !fs.existsSync(path.join(ROOT, ".next", "BUILD_ID"));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Run on the supported Node, as the commands that import this module are.
  await import("./lib/supportedNode.mjs");
  // `--install` (npm install's prepare): a fresh clone's install builds the dashboard too, so the first
  // `npm start` serves within seconds; later installs (and `npx reqwatch` here) only keep dist/ current.
  const mode = process.argv[2];
  if (mode === "--lib" || (mode === "--install" && !neverBuilt())) ensureLib();
  else ensureBuild();
}
