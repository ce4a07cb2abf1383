// The prebuilt dashboard the package carries (dist/dashboard), made from Next.js's standalone output
// after `next build` (`npm run build` runs it). `reqwatch dashboard` serves it with dist/server.cjs,
// so a project that installs reqwatch runs the pages with no build and no framework of its own.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const standalone = path.join(ROOT, ".next", "standalone");
const target = path.join(ROOT, "dist", "dashboard");

// Native or unused: better-sqlite3 (and the header package it declares) must be the user's own
// install, with the binary for their platform; sharp is next/image's optimizer, and the dashboard
// has no images.
const LEFT_OUT = new Set(["better-sqlite3", "node-addon-api", "sharp", "@img"]);

if (!fs.existsSync(path.join(standalone, ".next", "BUILD_ID"))) {
  console.error('package-dashboard: no standalone build in .next/standalone; run `next build` first (next.config.mjs sets output: "standalone").');
  process.exit(1);
}

// Built beside the target and renamed into place, so a failed run never leaves half a dashboard.
const building = `${target}.building`;
fs.rmSync(building, { recursive: true, force: true });
// Only the build and its modules: the trace also copies sources some server files name by path.
fs.cpSync(path.join(standalone, ".next"), path.join(building, ".next"), { recursive: true, filter: (from) => path.basename(from) !== "cache" });
fs.cpSync(path.join(ROOT, ".next", "static"), path.join(building, ".next", "static"), { recursive: true });
fs.cpSync(path.join(standalone, "node_modules"), path.join(building, "node_modules"), {
  recursive: true,
  filter: (from) => !LEFT_OUT.has(path.relative(path.join(standalone, "node_modules"), from).split(path.sep)[0]),
});

// Turbopack names each external package with a hash and links it from .next/node_modules to the
// project's copy. A tarball keeps no links: each becomes a one-line package that takes the copy the
// server hands over (server/main.ts: the pages run from the cache folder, where the user's
// node_modules do not resolve), else loads the user's own.
const externals = path.join(building, ".next", "node_modules");
for (const entry of fs.existsSync(externals) ? fs.readdirSync(externals, { withFileTypes: true }) : []) {
  if (!entry.isSymbolicLink()) continue;
  const link = path.join(externals, entry.name);
  // The package's name, scope included: the link's target after its node_modules/.
  const name = fs
    .readlinkSync(link)
    .split(/node_modules[\\/]/)
    .at(-1)
    .replaceAll("\\", "/");
  if (name !== "better-sqlite3")
    throw new Error(`package-dashboard: the build loads ${name} from the project's node_modules; server/main.ts hands the pages better-sqlite3 alone`);
  fs.unlinkSync(link);
  fs.mkdirSync(link);
  fs.writeFileSync(path.join(link, "package.json"), `${JSON.stringify({ name: entry.name, private: true, main: "index.js" })}\n`);
  fs.writeFileSync(
    path.join(link, "index.js"),
    `module.exports = globalThis[Symbol.for(${JSON.stringify(`reqwatch.external.${name}`)})] ?? require(${JSON.stringify(name)});\n`,
  );
}

fs.rmSync(target, { recursive: true, force: true });
fs.renameSync(building, target);
console.log(`package-dashboard: ${path.relative(ROOT, target)} ready`);
