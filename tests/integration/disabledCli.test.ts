import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli";
import { tempParent, tempStateDir } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";

const OFF = "reqwatch: tracking is off (REQWATCH_DISABLED=1): nothing is recorded. Unset REQWATCH_DISABLED to turn tracking back on.\n";
/** This process's environment with REQWATCH_DISABLED set to `value`. */
const disabled = (value: string): NodeJS.ProcessEnv => ({ ...process.env, REQWATCH_DISABLED: value });
const off = disabled("1");

/** A managed folder with a request in it, as a gateway's hooks left it before the rollback. */
function aRecordingFolder(): string {
  const stateDir = tempStateDir();
  expect(runCli(["create", "-w", "gateway", "--id", "before", "--state", "queued"], { stateDir }).code).toBe(0);
  return stateDir;
}

describe("reqwatch CLI with tracking off", () => {
  it("a hook's create, update and session records exit 0, say tracking is off, and write no file", () => {
    const stateDir = aRecordingFolder();
    const before = treeSnapshot(path.dirname(stateDir));

    // A gateway's hook: the id create prints goes on to the updates, so it still prints one.
    const created = runCli(["create", "-w", "gateway", "--state", "queued", "--prompt", "hi"], { stateDir, env: off });
    expect(created).toMatchObject({ code: 0, stderr: OFF });
    const id = created.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(runCli(["create", "-w", "gateway", "--id", "given", "--json"], { stateDir, env: off })).toMatchObject({ code: 0, stderr: OFF });
    for (const args of [
      ["update", id, "--state", "processing"],
      ["update", id, "--state", "completed", "--output", "done", "--exit-code", "0"],
      ["update", "before", "--callback-success", "true", "--callback-attempts", "2", "--by", "stop-hook"],
      ["session", "start"],
      ["session", "command", "npm test", "--status", "completed"],
      ["session", "file", "src/a.ts", "--summary", "edited"],
      ["session", "snapshot", "--task", "rollback"],
    ]) {
      const result = runCli(args, { stateDir, env: off });
      expect(result, args.join(" ")).toMatchObject({ code: 0, stderr: OFF });
    }
    expect(JSON.parse(runCli(["update", id, "--state", "completed", "--json"], { stateDir, env: off }).stdout)).toMatchObject({
      requestId: id,
      state: "completed",
    });

    expect(treeSnapshot(path.dirname(stateDir))).toEqual(before);
    // Turned back on, the folder is as it was: the request the hook updated while off is untouched.
    expect(JSON.parse(runCli(["get", "before"], { stateDir }).stdout)).toMatchObject({ state: "queued", version: 1 });
  });

  it("does not create a state folder that does not exist", () => {
    const parent = tempParent();
    const stateDir = path.join(parent, "state");
    expect(runCli(["create", "-w", "gateway"], { stateDir, env: off })).toMatchObject({ code: 0, stderr: OFF });
    expect(runCli(["session", "command", "ls", "--status", "completed"], { stateDir, env: off })).toMatchObject({ code: 0, stderr: OFF });
    expect(fs.readdirSync(parent)).toEqual([]);
  });

  it("the other writes, the one-request reads and the long-running commands say so, start nothing, and exit 0", () => {
    const stateDir = aRecordingFolder();
    const before = treeSnapshot(path.dirname(stateDir));
    for (const args of [
      ["cancel", "before"],
      ["retry", "--state", "failed"],
      ["cleanup", "--older-than", "1ms", "--state", "queued"],
      ["restore", "before"],
      ["recover"],
      ["pause", "gateway"],
      ["resume", "gateway"],
      ["adopt"],
      ["get", "before"],
      ["explain", "before"],
      ["session", "show"],
      ["monitor"],
      ["dashboard"],
      ["otel"],
      ["mcp"],
    ]) {
      expect(runCli(args, { stateDir, env: off }), args.join(" ")).toEqual({ code: 0, stdout: "", stderr: OFF });
    }
    // `npm start` runs the server without the CLI: it says the same and serves nothing.
    const server = spawnSync(process.execPath, [path.resolve(__dirname, "../../dist/server.cjs"), "--port", "1"], {
      encoding: "utf8",
      env: { ...off, REQWATCH_STATE_DIR: stateDir },
    });
    expect({ code: server.status, stdout: server.stdout, stderr: server.stderr }).toEqual({ code: 0, stdout: "", stderr: OFF });
    expect(treeSnapshot(path.dirname(stateDir))).toEqual(before);

    // A folder another program writes is not adopted: no marker is written.
    const foreign = path.join(tempParent(), "gateway-state");
    fs.mkdirSync(foreign);
    expect(runCli(["adopt"], { stateDir: foreign, env: off })).toEqual({ code: 0, stdout: "", stderr: OFF });
    expect(fs.readdirSync(foreign)).toEqual([]);
  });

  it("the lists print an empty result in the format asked", () => {
    const stateDir = aRecordingFolder();
    expect(runCli(["list", "--json"], { stateDir, env: off })).toMatchObject({ code: 0, stderr: OFF });
    expect(JSON.parse(runCli(["list", "--json"], { stateDir, env: off }).stdout)).toEqual({ items: [], nextCursor: null });
    expect(runCli(["list"], { stateDir, env: off }).stdout).toBe("No requests match.\n");
    expect(runCli(["list", "--format", "jsonl"], { stateDir, env: off }).stdout).toBe("");
    expect(JSON.parse(runCli(["queues", "--json"], { stateDir, env: off }).stdout)).toEqual([]);
    expect(JSON.parse(runCli(["session", "list", "--json"], { stateDir, env: off }).stdout)).toEqual([]);
  });

  it("a value of REQWATCH_DISABLED it does not know is a usage error that names it, and nothing is written", () => {
    const parent = tempParent();
    const stateDir = path.join(parent, "state");
    for (const args of [
      ["create", "-w", "gateway"],
      ["get", "x"],
    ]) {
      expect(runCli(args, { stateDir, env: disabled("sometimes") })).toEqual({
        code: 2,
        stdout: "",
        stderr: 'reqwatch: error: Invalid REQWATCH_DISABLED: "sometimes". Use 1, true, yes or on; or 0, false, no, off or empty.\n',
      });
    }
    expect(fs.readdirSync(parent)).toEqual([]);
    // Off means off in any of its spellings; 0 records as usual.
    expect(runCli(["create", "-w", "gateway"], { stateDir, env: disabled("ON") }).code).toBe(0);
    expect(fs.readdirSync(parent)).toEqual([]);
    expect(runCli(["create", "-w", "gateway", "--id", "kept"], { stateDir, env: disabled("0") })).toMatchObject({ code: 0, stdout: "kept\n", stderr: "" });
    expect(fs.existsSync(path.join(stateDir, "requests", "kept.json"))).toBe(true);
  });
});
