import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// `npx reqwatch ...` inside this repository: npm installs the project into its npx cache as a link
// and runs its `prepare` script, so `prepare` must not rebuild a dist/ that is already current.
const ROOT = path.resolve(__dirname, "../..");
const OUTPUTS = ["dist/cli.cjs", "dist/index.cjs", "dist/index.d.ts", "dist/server.cjs"];
const mtimes = () => OUTPUTS.map((file) => fs.statSync(path.join(ROOT, file)).mtimeMs);

describe("npx reqwatch in a checkout", () => {
  let cache: string;
  beforeAll(() => {
    cache = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-npx-cache-"));
  });
  afterAll(() => fs.rmSync(cache, { recursive: true, force: true }));

  it("prepare leaves a current dist/ alone, so the first npx runs the CLI without a rebuild", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string; scripts: Record<string, string> };
    expect(manifest.scripts.prepare).toBe("node scripts/build-if-stale.mjs --install");
    const before = mtimes();
    // An empty npm cache: what a first `npx reqwatch` in a fresh clone meets.
    const run = spawnSync("npx", ["--yes", "reqwatch", "--version"], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, npm_config_cache: cache, npm_config_loglevel: "info" },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(manifest.version);
    // npm ran prepare (it logs each script it runs), and prepare found nothing to build.
    expect(run.stderr).toContain("prepare");
    expect(run.stderr).not.toContain("build:lib");
    expect(mtimes()).toEqual(before);
  });
});
