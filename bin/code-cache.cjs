"use strict";
// The CLI's compiled code, kept between runs: Node's compile cache for every module, and for the CLI's
// own bundles a V8 code cache written after a command ran. Node's is made as a file is compiled,
// before it runs, so it holds only what V8 compiles eagerly: every start compiled again each function
// the command called. The CLI's is made once the command is done, so it holds those too; each command
// keeps its own, since each calls different functions of the same bundles.
//
// What these caches hold runs as the CLI's own code, so they live only where no other user can change
// them, and each file is checked before V8 reads it: V8 trusts a code cache's bytes (a damaged one
// crashes the process) and checks only the length of the text it was made from.
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");

/**
 * reqwatch's cache folder: `$REQWATCH_CACHE_DIR`, else `$XDG_CACHE_HOME/reqwatch`, else
 * `~/.cache/reqwatch`. The same rule as `defaultCacheDir` in lib/store/options.ts, which this plain
 * script, run before any bundle loads, cannot import.
 */
function reqwatchCacheDir(env) {
  if (env.REQWATCH_CACHE_DIR) return path.resolve(env.REQWATCH_CACHE_DIR);
  const xdg = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(require("node:os").homedir(), ".cache");
  return path.join(xdg, "reqwatch");
}

/**
 * Whether no other user can change what the folder `real` (a real path) holds: it and every folder
 * above it belong to this user or root and neither their group nor others may write to them, but
 * for a sticky folder (as /tmp) that is not `real` itself, when the folder under it is this user's
 * (`privateUnderSticky`: with mode 0700). Whoever may write to a folder on the way may rename what is
 * below it and put their own in its place.
 */
function ownedAlone(real, privateUnderSticky = true) {
  const uid = process.getuid();
  let folder = path.parse(real).root;
  const below = path.relative(folder, real).split(path.sep).filter(Boolean);
  let underSticky = false;
  for (let i = 0; ; i++) {
    const stat = fs.lstatSync(folder, { throwIfNoEntry: false });
    if (!stat || !stat.isDirectory() || (stat.uid !== uid && stat.uid !== 0)) return false;
    if (underSticky && (stat.uid !== uid || (privateUnderSticky && (stat.mode & 0o077) !== 0))) return false;
    underSticky = (stat.mode & 0o022) !== 0;
    if (underSticky && ((stat.mode & 0o1000) === 0 || i === below.length)) return false;
    if (i === below.length) return true;
    folder = path.join(folder, below[i]);
  }
}

/**
 * The real path of `folder` if no other user can change what it holds (`ownedAlone`), else
 * undefined. With `create`, the folders missing are made (mode 0700), once what holds them is found
 * to be the user's alone. No check where Node knows no user ids (Windows): there a user's own
 * folders are not shared.
 */
function privateFolder(folder, create) {
  try {
    if (typeof process.getuid !== "function") {
      if (create) fs.mkdirSync(folder, { recursive: true });
      return fs.statSync(folder).isDirectory() ? folder : undefined;
    }
    let existing = folder;
    while (!fs.existsSync(existing)) {
      if (!create || path.dirname(existing) === existing) return undefined;
      existing = path.dirname(existing);
    }
    if (existing !== folder) {
      if (!ownedAlone(fs.realpathSync(existing))) return undefined;
      fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    }
    const real = fs.realpathSync(folder);
    return ownedAlone(real) ? real : undefined;
  } catch {
    // A folder that cannot be read or made: no cache, only a slower start.
    return undefined;
  }
}

/**
 * Turns on Node's compile cache in `<reqwatch's cache folder>/compile-cache`, if that folder is the
 * user's alone, and returns the folder Node keeps this Node's files in, when it too is the user's
 * alone (else undefined: the CLI's own code cache is then off). A NODE_COMPILE_CACHE folder Node
 * turned on before the CLI started is the user's choice and kept; NODE_DISABLE_COMPILE_CACHE turns
 * both caches off.
 */
function enableCompileCache(env) {
  if (!env.NODE_COMPILE_CACHE) {
    const folder = privateFolder(path.join(reqwatchCacheDir(env), "compile-cache"), true);
    if (!folder) return undefined;
    // A cache it cannot write is reported in its return value, not thrown.
    Module.enableCompileCache(folder);
  }
  const used = Module.getCompileCacheDir();
  return used ? privateFolder(used, false) : undefined;
}

/** The file in reqwatch's cache folder that says the old caches were looked for (and removed): so only once. */
const OLD_CACHES_DONE = "old-temp-caches-removed";

/**
 * Removes what earlier versions of the CLI left in the shared temp folder (`tmp`, else the system's):
 * their own code cache, `<tmp>/node-compile-cache/<Node's folder for a version and this user>/reqwatch`
 * (Node's own files beside it may be any program's, and are left). A leaf is removed only where it is
 * certainly theirs: named as they named it, a real folder of this user's, on a path of real folders
 * no other user can change (`ownedAlone`, so nothing renamed in its place between the look and the
 * removal), and no link is followed. Done once: a marker in reqwatch's cache folder says so, and a
 * later start costs one look for it.
 */
function removeOldCaches(env, tmp) {
  if (typeof process.getuid !== "function") return;
  const cache = reqwatchCacheDir(env);
  if (fs.existsSync(path.join(cache, OLD_CACHES_DONE))) return;
  const folder = privateFolder(cache, true);
  if (!folder) return;
  const uid = process.getuid();
  // Node's name for its folder: `v24.1.0-x64-<V8's cache tag>-<uid>`.
  const ours = new RegExp(`^v\\d+\\.\\d+\\.\\d+-\\w+-[0-9a-f]+-${uid}$`);
  try {
    const shared = path.join(fs.realpathSync(tmp ?? require("node:os").tmpdir()), "node-compile-cache");
    for (const name of fs.readdirSync(shared)) {
      if (!ours.test(name)) continue;
      const leaf = path.join(shared, name, "reqwatch");
      const stat = fs.lstatSync(leaf, { throwIfNoEntry: false });
      if (stat && stat.isDirectory() && stat.uid === uid && ownedAlone(leaf, false)) fs.rmSync(leaf, { recursive: true, force: true });
    }
  } catch {
    // No such folder, or one that cannot be read: nothing of ours to remove there.
  }
  try {
    fs.writeFileSync(path.join(folder, OLD_CACHES_DONE), "", { mode: 0o600 });
  } catch {
    // Not written: the next start looks again.
  }
}

/** A file's identity, changed by any write or replacement: its inode, size and change time (which no copy keeps). */
function identity(file) {
  const stat = fs.statSync(file, { bigint: true });
  return `${stat.dev}.${stat.ino}.${stat.size}.${stat.ctimeNs}`;
}

// The checksum's loop in WebAssembly, which runs at machine speed from the first call: the same loop
// in JavaScript runs in V8's interpreter at a cold start, about 10 ms for one command's caches
// (node:crypto or node:zlib would cost 2 to 5 ms to load). These bytes are wat2wasm's of:
//   (module (memory (export "memory") 0)
//     (func (export "checksum") (param $length i32) (result i64) (local $at i32) (local $sum i64)
//       (local.set $sum (i64.xor (i64.const 0xcbf29ce484222325) (i64.extend_i32_u (local.get $length))))
//       (block $words (loop $word
//         (br_if $words (i32.gt_u (i32.add (local.get $at) (i32.const 8)) (local.get $length)))
//         (local.set $sum (i64.mul (i64.xor (local.get $sum) (i64.load (local.get $at))) (i64.const 0x9e3779b97f4a7c15)))
//         (local.set $sum (i64.xor (local.get $sum) (i64.shr_u (local.get $sum) (i64.const 29))))
//         (local.set $at (i32.add (local.get $at) (i32.const 8)))
//         (br $word)))
//       (block $bytes (loop $byte
//         (br_if $bytes (i32.ge_u (local.get $at) (local.get $length)))
//         (local.set $sum (i64.mul (i64.xor (local.get $sum) (i64.load8_u (local.get $at))) (i64.const 0x9e3779b97f4a7c15)))
//         (local.set $sum (i64.xor (local.get $sum) (i64.shr_u (local.get $sum) (i64.const 29))))
//         (local.set $at (i32.add (local.get $at) (i32.const 1)))
//         (br $byte)))
//       (local.get $sum)))
const CHECKSUM_WASM =
  "AGFzbQEAAAABBgFgAX8BfgMCAQAFAwEAAAcVAgZtZW1vcnkCAAhjaGVja3N1bQAACooBAYcBAgF/AX5CpcaIocicp/lLIACthSECAkADQCABQQhqIABLDQEgAiABKQMAhUKV+Kn6l7fem55/fiECIAIgAkIdiIUhAiABQQhqIQEMAAsLAkADQCABIABPDQEgAiABMQAAhUKV+Kn6l7fem55/fiECIAIgAkIdiIUhAiABQQFqIQEMAAsLIAIL";
let checksummer;

/**
 * A checksum of `bytes` (16 hex digits) that a change of any one 8-byte word always changes: each
 * step maps the sum one to one for a given word. For damage, not for an attacker (whoever could
 * write the file could write its checksum too). Throws where WebAssembly is off (--jitless).
 */
function checksum(bytes) {
  if (!checksummer) checksummer = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(CHECKSUM_WASM, "base64"))).exports;
  const missing = bytes.length - checksummer.memory.buffer.byteLength;
  if (missing > 0) checksummer.memory.grow(Math.ceil(missing / 65536));
  new Uint8Array(checksummer.memory.buffer, 0, bytes.length).set(bytes);
  return BigInt.asUintN(64, checksummer.checksum(bytes.length)).toString(16).padStart(16, "0");
}

/** A cache file's first line: what it was made by and for (this Node, this command, this build of the bundle) and its data's length and checksum. */
function header(made, data) {
  return Buffer.from(`${made}${data.length} ${checksum(data)}\n`, "latin1");
}

/** The data of a cache file whose first line says it was made as `made` and matches its data, else undefined. */
function checkedData(file, made) {
  if (file.length <= made.length || file.toString("latin1", 0, made.length) !== made) return undefined;
  const end = file.indexOf(10, made.length);
  if (end < 0) return undefined;
  const [length, sum] = file.toString("latin1", made.length, end).split(" ");
  const data = file.subarray(end + 1);
  return Number(length) === data.length && sum === checksum(data) ? data : undefined;
}

/** Whether the process `pid` still runs (one of another user is: it cannot be signalled, but is there). */
function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/**
 * From here on, `dist`'s cli*.cjs files compile through the cache kept in `folder` for `command`.
 * Returns `save`, called after the command succeeded: it writes the cache of each file that had none
 * (or one that failed its check or that V8 refused: another Node or other flags), and removes what an
 * older build left. A folder another user may change is not used.
 */
function useCodeCache(dist, folder, command) {
  if (fs.existsSync(folder) && !privateFolder(folder, false)) return function save() {};
  // The install's folder in each name: two copies of reqwatch do not remove each other's caches.
  const install = fs.statSync(dist, { bigint: true });
  const prefix = `${install.dev}.${install.ino}-${command}-`;
  // A run holds this marker while it uses the command's caches: one left by a process that is gone
  // means a cache was in use when it died (V8 crashes on a cache it cannot run), so that cache is
  // dropped and made again rather than crash every run.
  const running = `${prefix}running.`;
  const marker = path.join(folder, `${running}${process.pid}`);
  let names = [];
  try {
    names = fs.readdirSync(folder);
  } catch {
    // No folder yet: this run makes it.
  }
  const gone = (name) => name.startsWith(running) && !isRunning(Number(name.slice(running.length)));
  if (names.some(gone)) {
    for (const name of names) {
      if (name.startsWith(prefix) && !name.endsWith(".tmp") && (!name.startsWith(running) || gone(name))) fs.rmSync(path.join(folder, name), { force: true });
    }
  }
  let marked = false;
  const mark = () => {
    if (marked) return true;
    try {
      fs.writeFileSync(marker, "", { mode: 0o600 });
    } catch {
      return false;
    }
    marked = true;
    process.on("exit", () => fs.rmSync(marker, { force: true }));
    return true;
  };
  const written = [];
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    const name = path.basename(filename, ".cjs");
    if (path.dirname(filename) !== dist || !name.startsWith("cli")) return compile.call(this, content, filename);
    // Named after the file's identity: V8 checks only the text's length before it trusts a cache.
    const bundle = identity(filename);
    const file = path.join(folder, `${prefix}${name}-${bundle}`);
    const made = `reqwatch code cache 2 ${process.version} ${process.arch} v8 ${process.versions.v8} ${command} ${name} ${bundle} `;
    let cachedData;
    try {
      cachedData = checkedData(fs.readFileSync(file), made);
      // Damaged, cut short, another command's or an older format's: made again after this run.
      if (!cachedData) fs.rmSync(file, { force: true });
    } catch {
      // None yet: this run writes it.
    }
    if (cachedData && !mark()) cachedData = undefined;
    const script = new vm.Script(Module.wrap(content), { filename, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
    if (!cachedData || script.cachedDataRejected) written.push({ script, file, made, stale: `${prefix}${name}-` });
    return script.runInThisContext().call(this.exports, this.exports, Module.createRequire(filename), this, filename, path.dirname(filename));
  };
  return function save() {
    if (!written.length) return;
    try {
      if (!privateFolder(folder, true)) return;
      const names = fs.readdirSync(folder);
      for (const { script, file, made, stale } of written) {
        const data = script.createCachedData();
        const temporary = `${file}.${process.pid}.tmp`;
        fs.writeFileSync(temporary, Buffer.concat([header(made, data), data]), { mode: 0o600 });
        fs.renameSync(temporary, file);
        for (const old of names)
          if (old.startsWith(stale) && path.join(folder, old) !== file && !old.endsWith(".tmp")) fs.rmSync(path.join(folder, old), { force: true });
      }
    } catch {
      // A cache that cannot be written only makes the next start slower.
    }
  };
}

module.exports = { enableCompileCache, removeOldCaches, useCodeCache, checksum };
