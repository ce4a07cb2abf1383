import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ENVIRONMENT } from "../../lib/cli/environment";
import { runCli } from "../helpers/cli";

const ROOT = path.resolve(__dirname, "../..");

/** Every REQWATCH_ name the shipped code reads (lib/, server/, bin/). */
function namesInCode(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|tsx|js|mjs|cjs)$/.test(entry.name)) for (const [name] of fs.readFileSync(full, "utf8").matchAll(/REQWATCH_[A-Z_]+[A-Z]/g)) names.add(name);
    }
  };
  for (const dir of ["lib", "server", "bin"]) walk(path.join(ROOT, dir));
  return names;
}

describe("the environment's settings", () => {
  it("are all listed by reqwatch --help, and none it lists is unread", () => {
    const listed = ENVIRONMENT.map(([name]) => name);
    expect([...namesInCode()].sort()).toEqual([...listed].sort());
    const help = runCli(["--help"]);
    expect(help.code).toBe(0);
    for (const [name, what] of ENVIRONMENT) expect(help.stdout).toMatch(new RegExp(`^  ${name} +${what.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
    expect(help.stdout).toMatch(/REQWATCH_RETENTION +finished requests are archived after this \(default 1d; off turns it off\)/);
  });
});
