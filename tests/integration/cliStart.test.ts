import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../lib/cli/main";
import { BIN, runCli } from "../helpers/cli";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { waitForExit } from "../helpers/processes";
import { writeRequests } from "../helpers/requestFiles";
import { tempParent, tempStateDir } from "../helpers/stateDir";
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
const ownNodeCache = () => ({ NODE_COMPILE_CACHE: path.join(tempParent(), "node-cache") }) as Partial<NodeJS.ProcessEnv> as NodeJS.ProcessEnv & { NODE_COMPILE_CACHE: string };

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
      const nodeFolder = spawnSync(process.execPath, ["-e", 'const m = require("node:module"); m.enableCompileCache(); process.stdout.write(m.getCompileCacheDir())'], { encoding: "utf8", env: { ...process.env, ...env } }).stdout;
      const folder = path.join(nodeFolder, "reqwatch");
      fs.mkdirSync(folder, { recursive: true });
      fs.chmodSync(folder, 0o777);
      const stateDir = aFolderWithRequests();
      expect(runCli(["list", "--json"], { stateDir, env }).code).toBe(0);
      expect(fs.readdirSync(folder)).toEqual([]);
    });
  });
});
