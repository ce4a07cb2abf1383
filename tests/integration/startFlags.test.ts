import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerDashboard } from "../../lib/cli/commands/dashboard";
import { BIN } from "../helpers/cli";
import { tempParent, tempStateDir } from "../helpers/stateDir";

const START = path.resolve(__dirname, "../../scripts/start.mjs");

/** A value each of `reqwatch dashboard`'s options takes; a relative path is from where the command ran. */
const VALID: Record<string, string[]> = {
  "--port": ["4601"],
  "--host": ["127.0.0.1"],
  "--read-only": [],
  "--otel": [],
  "--otlp-port": ["0"],
  "--agent-files": ["off"],
  "--ipc-dir": ["ipc"],
  "--source": ["claude-mem:mem.db"],
};

/** The options `reqwatch dashboard --help` lists: its one definition. */
function dashboardFlags(): string[] {
  const program = new Command();
  registerDashboard(program);
  const dashboard = program.commands.find((command) => command.name() === "dashboard")!;
  return dashboard.options.filter((option) => !option.hidden).map((option) => option.long!);
}

/** `npm start -- <args>` and `reqwatch dashboard <args>`, run where the user typed them (npm says where in INIT_CWD). */
function both(args: string[], from: string) {
  const run = (argv: string[], cwd: string) => {
    const result = spawnSync(process.execPath, argv, { cwd, encoding: "utf8", env: { ...process.env, INIT_CWD: from } });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  // npm runs `npm start` in the package folder, whatever folder the user is in.
  return { start: run([START, ...args], path.resolve(__dirname, "../..")), dashboard: run([BIN, "dashboard", ...args], from) };
}

describe("npm start and reqwatch dashboard take the same options", () => {
  it("the test has a value for every option the dashboard command defines", () => {
    expect(dashboardFlags().sort()).toEqual(Object.keys(VALID).sort());
  });

  it("each option is taken by both (checked, nothing started or built)", () => {
    const stateDir = tempStateDir();
    const from = tempParent();
    for (const [flag, value] of Object.entries(VALID)) {
      const args = ["--state-dir", stateDir, flag, ...value, "--check"];
      expect(both(args, from), flag).toEqual({ start: { code: 0, stdout: "", stderr: "" }, dashboard: { code: 0, stdout: "", stderr: "" } });
    }
    expect(fs.readdirSync(from)).toEqual([]);
  });

  it("a wrong value, an unknown option and a relative state folder that is not there get the same error from both", () => {
    const stateDir = tempStateDir();
    const from = tempParent();
    for (const args of [
      ["--state-dir", stateDir, "--port", "0"],
      ["--state-dir", stateDir, "--otlp-port", "abc"],
      ["--state-dir", stateDir, "--agent-files", "maybe"],
      ["--state-dir", stateDir, "--source", "nope:x"],
      ["--state-dir", stateDir, "--no-such-option"],
      ["--state-dir", "typo", "--port", "1"],
    ]) {
      const { start, dashboard } = both(args, from);
      expect(start.code, args.join(" ")).toBe(2);
      expect(start, args.join(" ")).toEqual(dashboard);
    }
    expect(both(["--state-dir", "typo"], from).start.stderr).toContain(`the state directory ${path.join(from, "typo")} does not exist`);
    expect(fs.readdirSync(from)).toEqual([]);
  });
});
