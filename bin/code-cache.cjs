"use strict";
// The CLI's bundles, compiled with a V8 code cache written after a command ran. Node's compile cache
// (module.enableCompileCache) is made as a file is compiled, before it runs, so it holds only what V8
// compiles eagerly: every start compiled again each function the command called. This cache is made
// once the command is done, so it holds those too; each command keeps its own, since each calls
// different functions of the same bundles.
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");

/** A file's identity, changed by any write or replacement: its inode, size and change time (which no copy keeps). */
function identity(file) {
  const stat = fs.statSync(file, { bigint: true });
  return `${stat.dev}.${stat.ino}.${stat.size}.${stat.ctimeNs}`;
}

/** Whether `folder` is this user's alone: what is read from it runs as the CLI's own code. */
function ownedAlone(folder) {
  const stat = fs.statSync(folder, { throwIfNoEntry: false });
  return !!stat && stat.isDirectory() && (typeof process.getuid !== "function" || stat.uid === process.getuid()) && (stat.mode & 0o022) === 0;
}

/**
 * From here on, `dist`'s cli*.cjs files compile through the cache kept in `folder` for `command`.
 * Returns `save`, called after the command succeeded: it writes the cache of each file that had none
 * (or one V8 refused: another Node or other flags), and removes what an older build left. A folder
 * another user owns or may write to is not used.
 */
function useCodeCache(dist, folder, command) {
  if (fs.existsSync(folder) && !ownedAlone(folder)) return function save() {};
  // The install's folder in each name: two copies of reqwatch do not remove each other's caches.
  const install = fs.statSync(dist, { bigint: true });
  const prefix = `${install.dev}.${install.ino}-${command}-`;
  const written = [];
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    const name = path.basename(filename, ".cjs");
    if (path.dirname(filename) !== dist || !name.startsWith("cli")) return compile.call(this, content, filename);
    // Named after the file's identity: V8 checks only the text's length before it trusts a cache.
    const file = path.join(folder, `${prefix}${name}-${identity(filename)}`);
    let cachedData;
    try {
      cachedData = fs.readFileSync(file);
    } catch {
      // None yet: this run writes it.
    }
    const script = new vm.Script(Module.wrap(content), { filename, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
    if (!cachedData || script.cachedDataRejected) written.push({ script, file, stale: `${prefix}${name}-` });
    return script.runInThisContext().call(this.exports, this.exports, Module.createRequire(filename), this, filename, path.dirname(filename));
  };
  return function save() {
    if (!written.length) return;
    try {
      fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
      if (!ownedAlone(folder)) return;
      const names = fs.readdirSync(folder);
      for (const { script, file, stale } of written) {
        const temporary = `${file}.${process.pid}.tmp`;
        fs.writeFileSync(temporary, script.createCachedData());
        fs.renameSync(temporary, file);
        for (const old of names) if (old.startsWith(stale) && path.join(folder, old) !== file && !old.endsWith(".tmp")) fs.rmSync(path.join(folder, old), { force: true });
      }
    } catch {
      // A cache that cannot be written only makes the next start slower.
    }
  };
}

module.exports = { useCodeCache };
