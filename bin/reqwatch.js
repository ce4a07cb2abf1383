#!/usr/bin/env node
"use strict";
// Syntax any Node parses, so that an old one reaches the version check.
const tooOld = require("./supported-node.cjs").unsupportedNode();
if (tooOld) {
  process.stderr.write("reqwatch: " + tooOld + "\n");
  process.exit(1);
}
// Node keeps the bundle's compiled code between runs (in the system's temp folder), so each start
// compiles less; a cache it cannot write is reported in its return value, not thrown.
var nodeModule = require("node:module");
nodeModule.enableCompileCache();
// The CLI's own bundles keep a cache made after the command ran, beside Node's, one per command
// (bin/code-cache.cjs); none when Node's is off (NODE_DISABLE_COMPILE_CACHE).
var cacheFolder = nodeModule.getCompileCacheDir();
var command = /^[a-z]+$/.test(process.argv[2] || "") ? process.argv[2] : "other";
var path = require("node:path");
var saveCodeCache = cacheFolder ? require("./code-cache.cjs").useCodeCache(path.join(__dirname, "..", "dist"), path.join(cacheFolder, "reqwatch"), command) : function () {};
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
