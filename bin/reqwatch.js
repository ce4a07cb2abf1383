#!/usr/bin/env node
"use strict";
// Syntax any Node parses, so that an old one reaches the version check.
const tooOld = require("./supported-node.cjs").unsupportedNode();
if (tooOld) {
  // In the project's own checkout (npx reqwatch there, as the dashboard suggests), run again on the
  // Node the project installed for itself, as its npm scripts do; an installed package stops here.
  var nodeSh = require("node:path").join(__dirname, "..", "scripts", "node.sh");
  if (!require("node:fs").existsSync(nodeSh)) {
    process.stderr.write("reqwatch: " + tooOld + "\n");
    process.exit(1);
  }
  process.stderr.write("reqwatch: this is Node.js " + process.versions.node + ": running on the project's own Node (scripts/node.sh)\n");
  var rerun = require("node:child_process").spawnSync("bash", [nodeSh, "exec", "node", __filename].concat(process.argv.slice(2)), { stdio: "inherit" });
  process.exit(rerun.status === null ? 1 : rerun.status);
}
// Node keeps the compiled code of what the CLI loads between runs, so each start compiles less, and
// the CLI's own bundles keep a code cache made after the command ran, one per command: both under
// reqwatch's cache folder, and only if no other user can change it (bin/code-cache.cjs).
var path = require("node:path");
var codeCache = require("./code-cache.cjs");
var cacheFolder = codeCache.enableCompileCache(process.env);
// Earlier versions kept their code cache in the shared temp folder: removed once, where certainly theirs.
codeCache.removeOldCaches(process.env);
var command = /^[a-z]+$/.test(process.argv[2] || "") ? process.argv[2] : "other";
var saveCodeCache = cacheFolder ? codeCache.useCodeCache(path.join(__dirname, "..", "dist"), path.join(cacheFolder, "reqwatch"), command) : function () {};
// The CLI is bundled from lib/cli into dist/ by `npm install` (the prepare script).
let main;
try {
  main = require("../dist/cli.cjs").main;
} catch (error) {
  if (error && error.code === "MODULE_NOT_FOUND" && /dist[\\/]cli/.test(String(error.message))) {
    process.stderr.write("reqwatch: the CLI is not built yet; run `npm run build:lib` in the reqwatch folder.\n");
    process.exit(1);
  }
  throw error;
}
// A reader that stops early (`reqwatch list | head -1`) closes the pipe: the rest was not wanted, which is not an error.
process.stdout.on("error", function (error) {
  if (error && error.code === "EPIPE") process.exit(process.exitCode === undefined ? 0 : process.exitCode);
  throw error;
});
main(process.argv.slice(2)).then(function (code) {
  process.exitCode = code;
  if (code === 0) saveCodeCache();
});
