import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ENVIRONMENT } from "../../lib/cli/environment";
import { RENAMED_SETTINGS } from "../../lib/store/options";
import { parseFlag } from "../../lib/model/flag";
import { thrown } from "../helpers/thrown";
import { runCli } from "../helpers/cli";

const ROOT = path.resolve(__dirname, "../..");

/** Every REQWATCH_ name in the files under `dirs` whose names match `kind` (a file named is read whatever its name). */
function namesIn(dirs: string[], kind: RegExp): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (kind.test(entry.name)) for (const [name] of fs.readFileSync(full, "utf8").matchAll(/(?<![A-Z_])REQWATCH_[A-Z_]+[A-Z]/g)) names.add(name);
    }
  };
  for (const dir of dirs) {
    const full = path.join(ROOT, dir);
    if (fs.statSync(full).isDirectory()) walk(full);
    else for (const [name] of fs.readFileSync(full, "utf8").matchAll(/(?<![A-Z_])REQWATCH_[A-Z_]+[A-Z]/g)) names.add(name);
  }
  return names;
}

const CODE = /\.(ts|tsx|js|mjs|cjs)$/;

/** Every REQWATCH_ name the shipped code reads (lib/, server/, bin/). */
const namesInCode = () => namesIn(["lib", "server", "bin"], CODE);

/** Old names of renamed settings: still read, and named by the docs' table of renames, never by --help. */
const RENAMED: string[] = RENAMED_SETTINGS.map(({ env: [was] }) => was);

describe("the environment's settings", () => {
  it("are all listed by reqwatch --help, and none it lists is unread", () => {
    const listed = ENVIRONMENT.map(([name]) => name);
    expect([...namesInCode()].sort()).toEqual([...listed, ...RENAMED].sort());
    const help = runCli(["--help"]);
    expect(help.code).toBe(0);
    for (const name of RENAMED) expect(help.stdout).not.toContain(name);
    for (const [name, what] of ENVIRONMENT) expect(help.stdout).toMatch(new RegExp(`^  ${name} +${what.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
    expect(help.stdout).toMatch(/REQWATCH_RETENTION +finished requests are archived after this \(default 1d; off turns it off\)/);
  });

  it("are the ones the docs name: each listed one is documented, and the docs name no other but the development scripts' own", () => {
    const listed = new Set(ENVIRONMENT.map(([name]) => name));
    const documented = new Set([...fs.readFileSync(path.join(ROOT, "README.md"), "utf8").matchAll(/(?<![A-Z_])REQWATCH_[A-Z_]+[A-Z]/g)].map(([name]) => name));
    for (const name of namesIn(["docs"], /\.md$/)) documented.add(name);
    const development = namesIn(["scripts", "tests", "bench", "playwright.config.ts", "rolldown.config.mjs", ".ci/run"], /\.(ts|tsx|js|mjs|cjs|sh)$/);
    expect([...listed].filter((name) => !documented.has(name))).toEqual([]);
    expect([...documented].filter((name) => !listed.has(name) && !development.has(name) && !RENAMED.includes(name))).toEqual([]);
  });
});

describe("an on/off setting", () => {
  it("takes the usual spellings in any case and refuses the rest, naming the setting", () => {
    for (const on of ["1", "true", "TRUE", "yes", "On", " on "]) expect(parseFlag(on, "REQWATCH_OTEL")).toBe(true);
    for (const off of [undefined, "", "0", "false", "No", "off"]) expect(parseFlag(off, "REQWATCH_OTEL")).toBe(false);
    expect(thrown(() => parseFlag("maybe", "REQWATCH_OTEL"))).toMatchObject({
      code: "BAD_INPUT",
      message: 'Invalid REQWATCH_OTEL: "maybe". Use 1, true, yes or on; or 0, false, no, off or empty.',
    });
  });
});
