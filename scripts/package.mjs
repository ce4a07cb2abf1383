// `npm run package`: the package a user installs, reqwatch-<version>.tgz (publish that file). It is
// packed from a folder of its own with a manifest made for it, because this repository's
// package.json is the developers': devDependencies, scripts (`prepare` builds the CLI on every
// `npm install` here), allowScripts, `private`. The package's manifest has none of them, so a
// consumer's npm has no script to run or approve, and only the runtime dependencies arrive.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "tar";
import { ROOT, ensureBuild, packedBuildProblem } from "./build-if-stale.mjs";

/** What the package carries, beside its manifest and the dashboard's archive: the CLI's shim, the bundles, the docs. */
const FILES = [
  "bin",
  "dist/index.cjs",
  "dist/library.cjs",
  "dist/index.d.ts",
  "dist/rebuildWorker.cjs",
  "dist/rebuildThread.cjs",
  "dist/telemetryThread.cjs",
  "dist/usageReaderThread.cjs",
  "dist/cli.cjs",
  /^dist\/cli-.*\.cjs$/,
  "dist/server.cjs",
  /^dist\/server-.*\.cjs$/,
  "README.md",
  "LICENSE",
];

/** The fields of the repository's package.json that describe the package; nothing a developer uses. */
const MANIFEST_FIELDS = [
  "name",
  "version",
  "description",
  "license",
  "keywords",
  "repository",
  "bin",
  "main",
  "types",
  "exports",
  "engines",
  "dependencies",
  "peerDependencies",
  "peerDependenciesMeta",
];

export function packageManifest() {
  const source = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
  return Object.fromEntries(MANIFEST_FIELDS.filter((field) => field in source).map((field) => [field, source[field]]));
}

function wanted(relative) {
  return FILES.some((entry) => (typeof entry === "string" ? relative === entry : entry.test(relative)));
}

/**
 * Packs the package into `destination`; returns what `npm pack --json` says of it. `build: false`
 * packs the build as it is, and refuses one older than its sources (the tests: `npm test` builds
 * first, and a rebuild would rewrite dist/ under the other tests' feet).
 */
export function pack({ destination = ROOT, log = console.log, build = true } = {}) {
  if (build) ensureBuild({ log });
  const problem = packedBuildProblem();
  if (problem) throw new Error(`reqwatch: not packed: ${problem}.`);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-pack-"));
  try {
    const folder = path.join(staging, "reqwatch");
    const candidates = [...fs.readdirSync(ROOT), ...fs.readdirSync(path.join(ROOT, "dist")).map((name) => `dist/${name}`)];
    for (const relative of candidates.filter(wanted)) fs.cpSync(path.join(ROOT, relative), path.join(folder, relative), { recursive: true });
    // The prebuilt dashboard as one archive: npm unpacks its 1,400 files several times slower than
    // one file (server/unpackDashboard.ts unpacks it on the first start).
    create({ gzip: { level: 9 }, portable: true, sync: true, cwd: path.join(ROOT, "dist"), file: path.join(folder, "dist", "dashboard.tar.gz") }, [
      "dashboard",
    ]);
    fs.writeFileSync(path.join(folder, "package.json"), `${JSON.stringify(packageManifest(), null, 2)}\n`);
    const [packed] = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--pack-destination", destination], { cwd: folder, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }),
    );
    return { ...packed, path: path.join(destination, packed.filename) };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === "--refuse") {
    // The repository's own `npm pack` (its prepack script): it would pack the developers' manifest.
    console.error(
      "reqwatch: the package is made by `npm run package` (it writes reqwatch-<version>.tgz; publish that file), not by `npm pack` or `npm publish` here.",
    );
    process.exit(1);
  }
  const packed = pack();
  console.log(`${path.relative(process.cwd(), packed.path) || packed.path}: ${(packed.size / 1e6).toFixed(2)} MB, ${packed.files.length} files`);
}
