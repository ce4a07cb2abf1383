import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import zlib from "node:zlib";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../lib/cli/main";
import { BIN, runCli } from "../helpers/cli";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { waitForExit } from "../helpers/processes";
import { writeRequests } from "../helpers/requestFiles";
import { tempParent, tempStateDir } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";
import { stateDirAt } from "../../lib/stateFiles/stateDir";
import { liveFollower, syncWithFollower } from "../../lib/ingest/followerSync";

/** The modules lib/cli/commands/ registers commands from, each bundled as a chunk of its own (dist/cli-<module>.cjs). */
const COMMAND_MODULES = fs.readdirSync(path.resolve(__dirname, "../../lib/cli/commands")).map((file) => path.basename(file, ".ts"));

/**
 * What `reqwatch <args>` loaded, reported by a preload as the process exits: the files of dist/, the
 * packages, and Node's own modules (its load list is the one place that names those).
 */
function loadedBy(args: string[], stateDir: string): { dist: string[]; packages: string[]; builtins: string[] } {
  const parent = tempParent();
  const preload = path.join(parent, "report.cjs");
  const report = path.join(parent, "loaded.json");
  fs.writeFileSync(
    preload,
    `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify({
      dist: Object.keys(require.cache).filter((file) => file.includes("/dist/")).map((file) => file.split("/dist/")[1]),
      packages: Object.keys(require.cache).filter((file) => file.includes("/node_modules/")).map((file) => file.split("/node_modules/")[1].split("/")[0]),
      builtins: process.moduleLoadList.filter((name) => name.startsWith("NativeModule ")).map((name) => name.slice("NativeModule ".length)),
    })));`,
  );
  const result = spawnSync(process.execPath, ["--require", preload, BIN, ...args], { encoding: "utf8", env: { ...process.env, REQWATCH_STATE_DIR: stateDir } });
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return JSON.parse(fs.readFileSync(report, "utf8"));
}

/** The files of the CLI's own code cache under `nodeCache` (NODE_COMPILE_CACHE), by name, with their inodes. */
function codeCacheFiles(nodeCache: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const version of fs.existsSync(nodeCache) ? fs.readdirSync(nodeCache) : []) {
    const folder = path.join(nodeCache, version, "reqwatch");
    for (const name of fs.existsSync(folder) ? fs.readdirSync(folder) : []) found.set(path.join(folder, name), fs.statSync(path.join(folder, name)).ino);
  }
  return found;
}

/** An environment that names its own NODE_COMPILE_CACHE, so a test sees the caches its runs make. */
const ownNodeCache = () =>
  ({ NODE_COMPILE_CACHE: path.join(tempParent(), "node-cache") }) as Partial<NodeJS.ProcessEnv> as NodeJS.ProcessEnv & { NODE_COMPILE_CACHE: string };

const AS_ROOT = process.getuid?.() === 0;

/**
 * Makes `folder` another user's, as a shared temp folder's `node-compile-cache/` is whoever made it
 * first: as root, nobody's (uid 65534); else open to everyone, which a user can make of their own.
 */
function anotherUsers(folder: string): void {
  fs.mkdirSync(folder, { recursive: true });
  if (AS_ROOT) fs.chownSync(folder, 65534, 65534);
  else fs.chmodSync(folder, 0o777);
}

/** The name Node gives a CommonJS file's entry in its compile cache: the CRC-32 of its type (0) and path. */
const compileCacheKey = (file: string) =>
  zlib
    .crc32(Buffer.from(file), zlib.crc32(Buffer.from([0])))
    .toString(16)
    .padStart(8, "0");

/** The folder Node names after itself and the user under a compile cache folder (`v24.1.0-x64-<V8 tag>-<uid>`). */
function compileCacheTag(): string {
  const probe = path.join(tempParent(), "probe");
  const env = { ...process.env, NODE_COMPILE_CACHE: probe };
  return path.basename(
    spawnSync(process.execPath, ["-e", 'process.stdout.write(require("node:module").getCompileCacheDir())'], { encoding: "utf8", env }).stdout,
  );
}

/**
 * What whoever owns a compile cache folder can plant in it: an entry for bin/code-cache.cjs whose
 * header names the real file (its length and CRC-32, all Node checks) and whose V8 code is another
 * script of the same length (all V8 checks), which writes `ran` when it runs.
 */
function plantCompileCacheEntry(folder: string, ran: string): string {
  const target = fs.realpathSync(path.join(path.dirname(BIN), "code-cache.cjs"));
  const real = fs.readFileSync(target);
  const scratch = fs.realpathSync(tempParent());
  const evil = path.join(scratch, "evil.cjs");
  fs.writeFileSync(evil, `require("node:fs").writeFileSync(${JSON.stringify(ran)}, "ran");`.padEnd(real.length, " "));
  const made = spawnSync(process.execPath, ["-e", `require(${JSON.stringify(evil)})`], {
    env: { ...process.env, NODE_COMPILE_CACHE: path.join(scratch, "cache") },
  });
  expect(made.status).toBe(0);
  fs.rmSync(ran);
  const tag = compileCacheTag();
  const entry = fs.readFileSync(path.join(scratch, "cache", tag, compileCacheKey(evil)));
  entry.writeUInt32LE(zlib.crc32(real), 12);
  const planted = path.join(folder, tag, compileCacheKey(target));
  anotherUsers(path.dirname(planted));
  fs.writeFileSync(planted, entry);
  return planted;
}

/** The CLI's environment without a NODE_COMPILE_CACHE of the test's: reqwatch picks where its caches go. */
function withoutNodeCache(env: Record<string, string>): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete result.NODE_COMPILE_CACHE;
  delete result.NODE_DISABLE_COMPILE_CACHE;
  return result;
}

/** A file's identity that a rewrite changes: `kept` holds a hard link to each, so no new file reuses its inode. */
function keepIdentities(files: string[], kept: string): Map<string, number> {
  fs.mkdirSync(kept, { recursive: true });
  files.forEach((file, i) => fs.linkSync(file, path.join(kept, String(i))));
  return new Map(files.map((file) => [file, fs.statSync(file).ino]));
}

function aFolderWithRequests(): string {
  const stateDir = tempStateDir();
  for (const id of ["r1", "r2", "r3"]) writeRequestFile(stateDir, aRequest({ requestId: id }));
  return stateDir;
}

describe("the CLI's start", () => {
  it("names each command by the module that registers it, so that running one loads that module alone", async () => {
    for (const entry of COMMANDS) {
      const program = new Command("reqwatch");
      (await entry.load())(program, "0.0.0");
      expect(program.commands.map((command) => command.name()).sort()).toEqual([...entry.names].sort());
    }
  });

  it("a warm `list` (a follower vouches for the index) loads its own command, no other command's code, and neither node:crypto nor node:http", async () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, 2000);
    expect(runCli(["list", "--limit", "1"], { stateDir, env: { REQWATCH_FOLLOW: "0" } as Partial<NodeJS.ProcessEnv> as NodeJS.ProcessEnv }).code).toBe(0);
    const follower = spawn(process.execPath, [BIN, "follow", "--state-dir", stateDir], { stdio: "ignore" });
    try {
      await expect.poll(() => liveFollower(stateDirAt(stateDir))?.pid, { timeout: 20_000 }).toBe(follower.pid);
      await expect.poll(() => syncWithFollower(stateDirAt(stateDir)), { timeout: 20_000 }).toBe(true);
      const { dist, builtins } = loadedBy(["list", "--limit", "20"], stateDir);
      expect(dist).toContain("cli-list.cjs");
      const others = COMMAND_MODULES.filter((name) => name !== "list").map((name) => `cli-${name}.cjs`);
      expect(dist.filter((file) => others.includes(file) || file === "cli-mcpServer.cjs")).toEqual([]);
      expect(builtins.filter((name) => ["crypto", "http", "https", "zlib"].includes(name))).toEqual([]);
    } finally {
      follower.kill("SIGTERM");
      await waitForExit(follower);
    }
  });

  it("--version loads no command, and neither the tracker nor SQLite", () => {
    const { dist, packages } = loadedBy(["--version"], tempStateDir());
    expect(dist.filter((file) => COMMAND_MODULES.some((name) => file === `cli-${name}.cjs`))).toEqual([]);
    expect(packages).not.toContain("better-sqlite3");
  });

  describe("its code cache", () => {
    it("is written by a command that succeeded, not by one that failed, and read, not written again, by the next run", () => {
      const stateDir = aFolderWithRequests();
      const env = ownNodeCache();
      expect(runCli(["list", "--limit", "0"], { stateDir, env }).code).toBe(2);
      expect(codeCacheFiles(env.NODE_COMPILE_CACHE).size).toBe(0);
      const first = runCli(["list", "--json"], { stateDir, env });
      expect(first.code).toBe(0);
      const written = codeCacheFiles(env.NODE_COMPILE_CACHE);
      expect([...written.keys()].some((file) => /-list-cli-list-/.test(path.basename(file)))).toBe(true);
      expect(runCli(["list", "--json"], { stateDir, env })).toEqual(first);
      expect(codeCacheFiles(env.NODE_COMPILE_CACHE)).toEqual(written);
    });

    it("that V8 refuses (damaged, or from another Node) is replaced, and the command runs as it would without one", () => {
      const stateDir = aFolderWithRequests();
      const env = ownNodeCache();
      const first = runCli(["list", "--json"], { stateDir, env });
      const files = [...codeCacheFiles(env.NODE_COMPILE_CACHE).keys()];
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) fs.writeFileSync(file, "not a code cache");
      expect(runCli(["list", "--json"], { stateDir, env })).toEqual(first);
      for (const file of files) expect(fs.readFileSync(file, "utf8")).not.toBe("not a code cache");
    });

    it("in a folder another user may write to is neither read nor written", () => {
      const env = ownNodeCache();
      const nodeFolder = spawnSync(
        process.execPath,
        ["-e", 'const m = require("node:module"); m.enableCompileCache(); process.stdout.write(m.getCompileCacheDir())'],
        { encoding: "utf8", env: { ...process.env, ...env } },
      ).stdout;
      const folder = path.join(nodeFolder, "reqwatch");
      fs.mkdirSync(folder, { recursive: true });
      fs.chmodSync(folder, 0o777);
      const stateDir = aFolderWithRequests();
      expect(runCli(["list", "--json"], { stateDir, env }).code).toBe(0);
      expect(fs.readdirSync(folder)).toEqual([]);
    });

    it("planted by another user who owns a folder above it does not run, and the CLI answers without it", () => {
      const version = (JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../package.json"), "utf8")) as { version: string }).version;
      const ran = path.join(tempParent(), "ran");
      // Node's own place: <temp>/node-compile-cache/, in a temp folder everyone shares (sticky, as /tmp).
      const sharedTemp = path.join(tempParent(), "tmp");
      fs.mkdirSync(sharedTemp, { mode: 0o1777 });
      fs.chmodSync(sharedTemp, 0o1777);
      anotherUsers(path.join(sharedTemp, "node-compile-cache"));
      plantCompileCacheEntry(path.join(sharedTemp, "node-compile-cache"), ran);
      const ownCache = path.join(tempParent(), "cache");
      const first = runCli(["--version"], { env: withoutNodeCache({ TMPDIR: sharedTemp, REQWATCH_CACHE_DIR: ownCache }) });
      expect(fs.existsSync(ran)).toBe(false);
      expect(first).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });

      // reqwatch's cache folder under a folder another user owns: that user could rename what is below.
      const theirs = path.join(tempParent(), "theirs");
      anotherUsers(theirs);
      const cache = path.join(theirs, "cache");
      anotherUsers(path.join(cache, "compile-cache"));
      plantCompileCacheEntry(path.join(cache, "compile-cache"), ran);
      const before = treeSnapshot(theirs);
      const env = withoutNodeCache({ TMPDIR: sharedTemp, REQWATCH_CACHE_DIR: cache, XDG_CACHE_HOME: path.join(theirs, "xdg") });
      expect(runCli(["--version"], { env })).toEqual(first);
      expect(fs.existsSync(ran)).toBe(false);
      const stateDir = aFolderWithRequests();
      const listed = runCli(["list", "--json"], { stateDir, env });
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout).items).toHaveLength(3);
      expect(fs.existsSync(ran)).toBe(false);
      expect(treeSnapshot(theirs)).toEqual(before);
    });

    it("is kept under reqwatch's own cache folder, not the shared temp folder", () => {
      const sharedTemp = path.join(tempParent(), "tmp");
      fs.mkdirSync(sharedTemp);
      fs.chmodSync(sharedTemp, 0o1777);
      const cache = path.join(tempParent(), "cache");
      const env = withoutNodeCache({ TMPDIR: sharedTemp, REQWATCH_CACHE_DIR: cache });
      expect(runCli(["list", "--json"], { stateDir: aFolderWithRequests(), env }).code).toBe(0);
      expect(fs.readdirSync(sharedTemp)).toEqual([]);
      const ours = path.join(cache, "compile-cache", compileCacheTag(), "reqwatch");
      expect(fs.readdirSync(ours).some((name) => /-list-cli-list-/.test(name))).toBe(true);
    });

    it("under a shared sticky folder, is kept only in a folder of the user's own with mode 0700", () => {
      const sharedTemp = path.join(tempParent(), "tmp");
      fs.mkdirSync(sharedTemp);
      fs.chmodSync(sharedTemp, 0o1777);
      const stateDir = aFolderWithRequests();
      for (const [mode, kept] of [
        [0o755, false],
        [0o700, true],
      ] as const) {
        const cache = path.join(sharedTemp, `cache-${mode.toString(8)}`);
        fs.mkdirSync(cache);
        fs.chmodSync(cache, mode);
        expect(runCli(["list", "--json"], { stateDir, env: withoutNodeCache({ REQWATCH_CACHE_DIR: cache }) }).code).toBe(0);
        expect(fs.existsSync(path.join(cache, "compile-cache", compileCacheTag(), "reqwatch")), mode.toString(8)).toBe(kept);
      }
    });

    it("checks each file with the checksum its comment describes, in WebAssembly", () => {
      // The loop of bin/code-cache.cjs's comment, in BigInt arithmetic.
      const reference = (bytes: Buffer) => {
        const mix = (sum: bigint, word: bigint) => {
          const mixed = BigInt.asUintN(64, (sum ^ word) * 0x9e3779b97f4a7c15n);
          return mixed ^ (mixed >> 29n);
        };
        let sum = 0xcbf29ce484222325n ^ BigInt(bytes.length);
        let at = 0;
        for (; at + 8 <= bytes.length; at += 8) sum = mix(sum, bytes.readBigUInt64LE(at));
        for (; at < bytes.length; at++) sum = mix(sum, BigInt(bytes.readUInt8(at)));
        return sum.toString(16).padStart(16, "0");
      };
      const { checksum } = createRequire(__filename)("../../bin/code-cache.cjs") as { checksum: (bytes: Uint8Array) => string };
      const bytes = Buffer.from(Array.from({ length: 200_003 }, (_, i) => (i * 2654435761) >>> 24));
      for (const length of [0, 1, 7, 8, 9, 64, 1001, 200_003]) expect(checksum(bytes.subarray(3, 3 + length))).toBe(reference(bytes.subarray(3, 3 + length)));
      const flipped = Buffer.from(bytes);
      flipped.writeUInt8(flipped.readUInt8(150_000) ^ 1, 150_000);
      expect(checksum(flipped)).not.toBe(checksum(bytes));
    });

    describe("damaged, it is found before V8 reads it: the command answers as without it, and the next run finds it good again", () => {
      const damages: Record<string, (files: Map<string, Buffer>, otherCommand: (file: string) => Buffer | undefined) => Map<string, Buffer>> = {
        truncated: (files) => new Map([...files].map(([file, bytes]) => [file, bytes.subarray(0, bytes.length >> 1)])),
        "with bytes flipped": (files) =>
          new Map(
            [...files].map(([file, bytes]) => {
              const flipped = Buffer.from(bytes);
              for (let i = 64; i < flipped.length; i += 97) flipped.writeUInt8(flipped.readUInt8(i) ^ 0x5a, i);
              return [file, flipped];
            }),
          ),
        "replaced with another command's": (files, otherCommand) =>
          new Map([...files].flatMap(([file]) => (otherCommand(file) ? [[file, otherCommand(file)!] as const] : []))),
      };
      for (const [damage, damaged] of Object.entries(damages)) {
        it(damage, () => {
          const stateDir = aFolderWithRequests();
          const env = ownNodeCache();
          expect(runCli(["get", "r1"], { stateDir, env }).code).toBe(0);
          const first = runCli(["list", "--json"], { stateDir, env });
          expect(first.code).toBe(0);
          const listFiles = [...codeCacheFiles(env.NODE_COMPILE_CACHE).keys()].filter((file) => /-list-cli/.test(path.basename(file)));
          expect(listFiles.length).toBeGreaterThan(3);
          const otherCommand = (file: string) => {
            const other = path.join(path.dirname(file), path.basename(file).replace("-list-", "-get-"));
            return fs.existsSync(other) ? fs.readFileSync(other) : undefined;
          };
          const written = damaged(new Map(listFiles.map((file) => [file, fs.readFileSync(file)])), otherCommand);
          expect(written.size).toBeGreaterThan(1);
          for (const [file, bytes] of written) fs.writeFileSync(file, bytes);

          expect(runCli(["list", "--json"], { stateDir, env })).toEqual(first);
          expect(runCli(["list", "--json"], { stateDir, env })).toEqual(first);
          const healed = codeCacheFiles(env.NODE_COMPILE_CACHE);
          for (const [file, bytes] of written) expect(fs.readFileSync(file).equals(bytes), file).toBe(false);
          expect(runCli(["list", "--json"], { stateDir, env })).toEqual(first);
          expect(codeCacheFiles(env.NODE_COMPILE_CACHE)).toEqual(healed);
        });
      }
    });

    it("in use when its process died is not used again: the next run compiles afresh and replaces it", () => {
      const stateDir = aFolderWithRequests();
      const env = ownNodeCache();
      const first = runCli(["list", "--json"], { stateDir, env });
      const files = [...codeCacheFiles(env.NODE_COMPILE_CACHE).keys()].filter((file) => /-list-cli/.test(path.basename(file)));
      expect(files.length).toBeGreaterThan(0);
      const used = keepIdentities(files, path.join(path.dirname(env.NODE_COMPILE_CACHE), "kept"));
      // A process that dies as the command ends, the cache read and in use: as V8 does on a cache it cannot run.
      const dies = path.join(tempParent(), "dies.cjs");
      fs.writeFileSync(dies, 'process.on("exit", () => process.kill(process.pid, "SIGKILL"));');
      const died = spawnSync(process.execPath, ["--require", dies, BIN, "list", "--json"], {
        encoding: "utf8",
        env: { ...process.env, ...env, REQWATCH_STATE_DIR: stateDir },
      });
      expect(died.signal).toBe("SIGKILL");
      expect(runCli(["list", "--json"], { stateDir, env })).toEqual(first);
      for (const file of files) expect(fs.statSync(file).ino, file).not.toBe(used.get(file));
    });
  });

  describe("what earlier versions left in the shared temp folder", () => {
    /** A shared temp folder (sticky, as /tmp) holding `node-compile-cache/` as the user's earlier runs made it. */
    function anOldSharedTemp(): { sharedTemp: string; nodeCache: string } {
      const sharedTemp = path.join(tempParent(), "tmp");
      fs.mkdirSync(sharedTemp);
      fs.chmodSync(sharedTemp, 0o1777);
      const nodeCache = path.join(sharedTemp, "node-compile-cache");
      fs.mkdirSync(nodeCache);
      return { sharedTemp, nodeCache };
    }

    /** A folder of old cache files, as the CLI's code cache made them: mode 0700, files 0600. */
    function anOldCodeCache(folder: string): void {
      fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
      for (const name of ["1.2-list-cli-1.2.3.4", "1.2-list-cli-list-1.2.5.6", "1.2-other-cli-1.2.3.4.99.tmp"])
        fs.writeFileSync(path.join(folder, name), "code", { mode: 0o600 });
    }

    const uid = process.getuid!();

    it("are removed once, where certainly theirs: a real folder of the user's under the name they used; no link followed, nothing else touched", () => {
      const { sharedTemp, nodeCache } = anOldSharedTemp();
      const elsewhere = tempParent();
      const theirs = path.join(nodeCache, `v22.14.0-x64-00250a7c-${uid}`, "reqwatch");
      anOldCodeCache(theirs);
      // Node's own files beside it may be any program's.
      fs.writeFileSync(path.join(nodeCache, `v22.14.0-x64-00250a7c-${uid}`, "5f3e2a1b"), "node's");
      // A leaf that is a link, and a Node folder that is a link, each to a real folder named reqwatch.
      anOldCodeCache(path.join(elsewhere, "linked", "reqwatch"));
      fs.mkdirSync(path.join(nodeCache, `v24.21.0-x64-964aae3f-${uid}`));
      fs.symlinkSync(path.join(elsewhere, "linked", "reqwatch"), path.join(nodeCache, `v24.21.0-x64-964aae3f-${uid}`, "reqwatch"));
      anOldCodeCache(path.join(elsewhere, "project", "reqwatch"));
      fs.symlinkSync(path.join(elsewhere, "project"), path.join(nodeCache, `v26.12.1-x64-310b2ce3-${uid}`));
      // Another user's Node folder, a folder not named as Node names its own, a leaf another user may change.
      anOldCodeCache(path.join(nodeCache, "v24.21.0-x64-964aae3f-65534", "reqwatch"));
      anOldCodeCache(path.join(nodeCache, `reqwatch-${uid}`, "reqwatch"));
      anotherUsers(path.join(nodeCache, `v23.11.1-x64-8a9b7c6d-${uid}`, "reqwatch"));
      const untouched = (snapshot: ReturnType<typeof treeSnapshot>) => snapshot.filter((entry) => !entry.path.includes(`00250a7c-${uid}`));
      const [before, beforeElsewhere] = [treeSnapshot(sharedTemp), treeSnapshot(elsewhere)];
      const cache = path.join(tempParent(), "cache");
      const env = withoutNodeCache({ TMPDIR: sharedTemp, REQWATCH_CACHE_DIR: cache });

      expect(runCli(["--version"], { env }).code).toBe(0);
      expect(fs.existsSync(theirs)).toBe(false);
      expect(fs.readdirSync(path.dirname(theirs))).toEqual(["5f3e2a1b"]);
      expect(untouched(treeSnapshot(sharedTemp))).toEqual(untouched(before));
      expect(treeSnapshot(elsewhere)).toEqual(beforeElsewhere);

      // Once: a folder of that name made since is the user's own business.
      anOldCodeCache(theirs);
      const again = treeSnapshot(sharedTemp);
      expect(runCli(["--version"], { env }).code).toBe(0);
      expect(treeSnapshot(sharedTemp)).toEqual(again);
    });

    it("are left where another user may change the folders above them, and a temp folder without any is left as it was", () => {
      const { sharedTemp, nodeCache } = anOldSharedTemp();
      anotherUsers(nodeCache);
      anOldCodeCache(path.join(nodeCache, `v22.14.0-x64-00250a7c-${uid}`, "reqwatch"));
      const before = treeSnapshot(sharedTemp);
      expect(runCli(["--version"], { env: withoutNodeCache({ TMPDIR: sharedTemp, REQWATCH_CACHE_DIR: path.join(tempParent(), "cache") }) }).code).toBe(0);
      expect(treeSnapshot(sharedTemp)).toEqual(before);

      const empty = path.join(tempParent(), "tmp");
      fs.mkdirSync(empty);
      expect(runCli(["--version"], { env: withoutNodeCache({ TMPDIR: empty, REQWATCH_CACHE_DIR: path.join(tempParent(), "cache") }) }).code).toBe(0);
      expect(fs.readdirSync(empty)).toEqual([]);
    });
  });
});
