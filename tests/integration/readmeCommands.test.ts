import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lineToolchain } from "../helpers/consumer";

// The README's commands on a machine whose Node is older than the project's (line 20, which reqwatch
// itself refuses), and npm test's two halves. Run as npm runs them: `node scripts/<script>.mjs`.
const ROOT = path.resolve(__dirname, "../..");
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-readme-"));
  dirs.push(dir);
  return dir;
};

describe("the README's commands on an older Node", () => {
  const old = lineToolchain("20");

  it("npm start runs itself on the pinned Node and says so in one line", () => {
    const run = spawnSync(old.node, ["scripts/start.mjs", "--help"], { cwd: ROOT, encoding: "utf8", env: old.env });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^reqwatch: this is Node\.js 20\.\d+\.\d+ and the project needs 22\.14\.0 or newer: running on the pinned Node/),
    ]);
    // `reqwatch dashboard` itself refuses Node 20: its usage printed means it ran on the pinned one.
    expect(run.stdout).toContain("Usage: npm start -- [options]");
    expect(run.stdout).toContain("--state-dir");
  });

  it("the CLI of the checkout (npx reqwatch, as the dashboard suggests) runs itself on the pinned Node and says so in one line", () => {
    const stateDir = tempDir();
    const run = spawnSync(old.node, ["bin/reqwatch.js", "create", "--state-dir", stateDir, "--workspace", "demo", "--state", "queued"], {
      cwd: ROOT,
      encoding: "utf8",
      env: old.env,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^reqwatch: this is Node\.js 20\.\d+\.\d+: running on the project's own Node/)]);
    expect(fs.readdirSync(path.join(stateDir, "requests")).filter((name) => name.endsWith(".json"))).toHaveLength(1);
  });

  it("npm test names what the machine lacks, with the command that installs it, before it runs anything", () => {
    const run = spawnSync(old.node, ["scripts/test.mjs"], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...old.env, REQWATCH_CHROMIUM: path.join(tempDir(), "no-chromium") },
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split("\n").at(-1)).toBe(
      "npm test needs Chromium (the Playwright specs): sudo apt-get install chromium (or set REQWATCH_CHROMIUM to a Chromium of your own); .ci/run installs them and runs the tests",
    );
    expect(run.stdout).toBe("");
  });
});

describe("npm test's halves", () => {
  // Each half a node process that leaves a mark when it has run to its end, then exits with its code.
  const half = (name: string, mark: string, code: number, log?: string) => ({
    name,
    command: process.execPath,
    args: [
      "-e",
      `setTimeout(() => { require("node:fs").writeFileSync(${JSON.stringify(mark)}, ""); console.log("${name} ran"); process.exit(${code}); }, 200)`,
    ],
    log,
  });
  const runHalves = async (halves: ReturnType<typeof half>[]) => {
    const { runHalves: run } = (await import(path.join(ROOT, "scripts/lib/halves.mjs"))) as {
      runHalves: (halves: unknown[], options: { write: (text: string) => void }) => Promise<number>;
    };
    let printed = "";
    const code = await run(halves, { write: (text) => void (printed += text) });
    return { code, printed };
  };

  it("both run to their end when the first fails, and the exit code is the first one's", async () => {
    const dir = tempDir();
    const { code, printed } = await runHalves([half("vitest", path.join(dir, "a"), 3), half("Playwright", path.join(dir, "b"), 0, path.join(dir, "b.log"))]);
    expect(code).toBe(3);
    expect(fs.existsSync(path.join(dir, "a")) && fs.existsSync(path.join(dir, "b"))).toBe(true);
    expect(printed).toContain("--- Playwright (exit 0) ---\nPlaywright ran\n");
    expect(printed).toContain("vitest failed (exit 3), Playwright passed");
  });

  it("a second half that fails fails the run with its code", async () => {
    const dir = tempDir();
    const { code, printed } = await runHalves([half("vitest", path.join(dir, "a"), 0), half("Playwright", path.join(dir, "b"), 5, path.join(dir, "b.log"))]);
    expect(code).toBe(5);
    expect(printed).toContain("vitest passed, Playwright failed (exit 5)");
  });
});
