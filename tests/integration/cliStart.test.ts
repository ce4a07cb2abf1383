import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../lib/cli/main";
import { BIN, runCli } from "../helpers/cli";
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
});
