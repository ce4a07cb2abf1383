import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { chromium } from "@playwright/test";
import { list } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsumerProject, consumerParent, lineToolchain, packTarball, supportedLines, withoutMachineNotices } from "../helpers/consumer";
import { eventually } from "../helpers/processes";
import { EXPORTS, SESSION_TRACKER_MEMBERS, TRACKER_MEMBERS, TYPES } from "../helpers/publicApi";

// The packed package itself, installed into an empty project on the Node the tests run on: what it
// is, what it exports, the dashboard in a browser, and what it says when it cannot run. Every
// supported Node line runs it too (nodeLine<line>.test.ts).
const ROOT = path.resolve(__dirname, "../..");

/** The members an interface of the package's types declares, by name, in order. */
function membersOf(types: string, name: string): string[] {
  const body = new RegExp(`^export interface ${name} \\{\\n([\\s\\S]*?)^\\}`, "m").exec(types)?.[1];
  if (body === undefined) throw new Error(`the package's types declare no interface ${name}`);
  return [...body.matchAll(/^\t(?:readonly )?(\w+)\??[(:<]/gm)].map((match) => match[1]!);
}

describe("the packed package", () => {
  let parent: string;
  let packed: ReturnType<typeof packTarball>;
  let project: ConsumerProject;
  let manifest: Record<string, unknown>;

  beforeAll(() => {
    parent = consumerParent("package");
    packed = packTarball(parent);
    project = ConsumerProject.install(packed.path, parent, { node: process.execPath, env: process.env });
    manifest = JSON.parse(fs.readFileSync(path.join(project.dir, "node_modules/reqwatch/package.json"), "utf8"));
    console.log(`packed ${packed.size} bytes (${packed.unpackedSize} unpacked, ${packed.files.length} files)`);
  }, 600_000);
  afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

  it("has a manifest a consumer's npm takes as it is: publishable, no script, no development fields, the runtime dependencies alone", () => {
    expect(Object.keys(manifest).sort()).toEqual([
      "bin",
      "dependencies",
      "description",
      "engines",
      "exports",
      "license",
      "main",
      "name",
      "peerDependencies",
      "peerDependenciesMeta",
      "types",
      "version",
    ]);
    expect(Object.keys(manifest.dependencies as object)).toEqual(["better-sqlite3"]);
    // The shared store's client: installed by those who use it, never by npm for the others.
    expect(manifest.peerDependencies).toEqual({ pg: expect.stringMatching(/^\^8\./) });
    expect(manifest.peerDependenciesMeta).toEqual({ pg: { optional: true } });
    // One minimum everywhere: the package's engines, the repository's, the lowest line the tests run on.
    const repository = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
    const lowest = supportedLines()[0]!.node;
    expect(manifest.engines).toEqual({ node: `>=${lowest}` });
    expect(repository.engines).toEqual({ node: `>=${lowest}` });
    // What it carries: the bundles, the prebuilt dashboard as one archive, the licence; no sources, tests or native binaries.
    expect(packed.files.filter((file) => /^(tests|app|components|bench|lib|server|scripts)\//.test(file) || file.startsWith("dist/dashboard/"))).toEqual([]);
    expect(packed.files).toEqual(
      expect.arrayContaining([
        "LICENSE",
        "README.md",
        "bin/reqwatch.js",
        "bin/supported-node.cjs",
        "dist/index.cjs",
        "dist/library.cjs",
        "dist/index.d.ts",
        "dist/cli.cjs",
        "dist/cli-mcpServer.cjs",
        "dist/rebuildWorker.cjs",
        "dist/rebuildThread.cjs",
        "dist/telemetryThread.cjs",
        "dist/usageReaderThread.cjs",
        "dist/server.cjs",
        "dist/dashboard.tar.gz",
      ]),
    );
    const archived: string[] = [];
    list({ file: path.join(project.dir, "node_modules/reqwatch/dist/dashboard.tar.gz"), sync: true, onReadEntry: (entry) => void archived.push(entry.path) });
    expect(archived).toContain("dashboard/.next/BUILD_ID");
    expect([...packed.files, ...archived].filter((file) => /better-sqlite3\/|\.node$/.test(file))).toEqual([]);
    // Its types are plain TypeScript: a consumer needs no zod, or anything else, to check them.
    expect(fs.readFileSync(path.join(project.dir, "node_modules/reqwatch/dist/index.d.ts"), "utf8")).not.toMatch(/^import |zod/m);
  });

  it("compiles nothing, here or for a consumer: better-sqlite3 loads the binary its package carries", () => {
    const prebuilt = `node_modules/better-sqlite3/prebuilds/${process.platform}-${process.arch}.node`;
    const probe =
      'const D = require("better-sqlite3"); new D(":memory:").close(); console.log(Object.keys(require.cache).filter((file) => file.endsWith(".node")).join("\\n"));';
    for (const [where, folder] of [
      ["this repository", ROOT],
      ["the consumer", project.dir],
    ] as const) {
      expect(fs.existsSync(path.join(folder, "node_modules/better-sqlite3/build")), where).toBe(false);
      const loaded = spawnSync(process.execPath, ["-e", probe], { cwd: folder, encoding: "utf8" });
      expect(loaded.stdout.trim(), where).toBe(path.join(folder, prebuilt));
    }
  });

  it("is made by `npm run package`; `npm pack` here says so instead of packing the developers' manifest", () => {
    const refused = spawnSync("npm", ["pack", "--dry-run"], { cwd: ROOT, encoding: "utf8" });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("reqwatch: the package is made by `npm run package`");
  });

  it("exports exactly the library's names, each defined, from CommonJS and ESM, and declares each in its types", () => {
    const cjs = project.node([
      "-e",
      'const m = require("reqwatch"); console.log(JSON.stringify(Object.keys(m).sort()), JSON.stringify(Object.keys(m).filter((k) => m[k] === undefined)));',
    ]);
    expect(cjs.stdout).toBe(`${JSON.stringify([...EXPORTS].sort())} []\n`);
    // Node's ESM view of a CommonJS file adds `default` (and, on newer lines, `module.exports`) itself.
    const esm = project.node([
      "--input-type=module",
      "-e",
      'import * as m from "reqwatch"; const own = Object.keys(m).filter((k) => k !== "default" && k !== "module.exports"); console.log(JSON.stringify(own.sort()), JSON.stringify(own.filter((k) => m[k] === undefined)));',
    ]);
    expect(esm.stdout).toBe(`${JSON.stringify([...EXPORTS].sort())} []\n`);
    const types = fs.readFileSync(path.join(project.dir, "node_modules/reqwatch/dist/index.d.ts"), "utf8");
    for (const name of EXPORTS) expect(types, name).toMatch(new RegExp(`^export declare (const|function|class) ${name}\\b`, "m"));
    // Every name the types export is one of the library's: the types a call needs and the library does not name are declared, not exported.
    const exported = [...types.matchAll(/^export (?:declare )?(?:const|function|class|interface|type) (\w+)/gm)].map((match) => match[1]);
    expect(exported.sort()).toEqual([...EXPORTS, ...TYPES].sort());
    expect(types.match(/^export\b.*$/gm)?.filter((line) => !/^export (declare )?(const|function|class|interface|type) /.test(line))).toEqual(["export {};"]);
  });

  it("declares on its tracker and session tracker only what a gateway or a worker calls", () => {
    const types = fs.readFileSync(path.join(project.dir, "node_modules/reqwatch/dist/index.d.ts"), "utf8");
    expect(membersOf(types, "Tracker")).toEqual(TRACKER_MEMBERS);
    expect(membersOf(types, "SessionTracker")).toEqual(SESSION_TRACKER_MEMBERS);
  });

  it("serves the prebuilt dashboard with `npx reqwatch dashboard`, on ./.reqwatch of the folder it runs in, to a browser", async () => {
    const seeded = project.node([
      "-e",
      'const t = require("reqwatch").openTracker({ stateDir: ".reqwatch" }); t.create({ requestId: "seen-on-the-page", workspace: "gw" }); t.close();',
    ]);
    expect(seeded.status, seeded.stderr).toBe(0);
    const first = await project.dashboardFirstPage("seen-on-the-page");
    console.log(`first page ${Math.round(first.ms)} ms after the command`);
    expect(first.output).toContain(`reqwatch: state directory ${path.join(project.dir, ".reqwatch")}`);
    // Every line is reqwatch's own: no framework noise ("✓ Running next.config took 4ms").
    expect(
      withoutMachineNotices(first.output)
        .split("\n")
        .filter((line) => line.trim() && !line.startsWith("reqwatch: ")),
    ).toEqual([]);

    await project.withDashboard(async ({ url, running }) => {
      await eventually(async () => {
        running();
        return (await fetch(`${url}/api/status`).catch(() => undefined))?.ok || undefined;
      }, 60_000);
      const status = (await (await fetch(`${url}/api/status`)).json()) as { counts: Record<string, number> };
      expect(status.counts.created).toBe(1);
      // The browser's code is served from the package too.
      const page = await (await fetch(`${url}/requests`)).text();
      const script = /\/_next\/static\/[^"]+\.js/.exec(page)?.[0];
      expect(script).toBeDefined();
      const asset = await fetch(`${url}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("content-type")).toMatch(/javascript/);

      // In a browser: the page runs (its code, its event stream), and a request the gateway writes now appears in the table.
      const browser = await chromium.launch({
        executablePath: process.env.REQWATCH_CHROMIUM ?? "/usr/bin/chromium",
        args: ["--disable-gpu", "--no-first-run"],
      });
      try {
        const tab = await browser.newPage();
        await tab.goto(`${url}/requests`);
        await expect.poll(() => tab.getByRole("link", { name: "seen-on-the-page" }).count()).toBe(1);
        const written = project.node([
          "-e",
          'const t = require("reqwatch").openTracker({ stateDir: ".reqwatch" }); t.create({ requestId: "arrived-live", workspace: "gw", state: "queued" }); t.close();',
        ]);
        expect(written.status, written.stderr).toBe(0);
        await expect.poll(() => tab.getByRole("link", { name: "arrived-live" }).count(), { timeout: 15_000 }).toBe(1);
      } finally {
        await browser.close();
      }
    });
  }, 120_000);

  it("unpacks its dashboard once into the cache folder, whole, even for two dashboards starting at once; a cache it cannot write is no obstacle", async () => {
    const cache = path.join(parent, "a-fresh-cache");
    const both = await Promise.all([
      project.dashboardFirstPage("seen-on-the-page", { REQWATCH_CACHE_DIR: cache }),
      project.dashboardFirstPage("seen-on-the-page", { REQWATCH_CACHE_DIR: cache }),
    ]);
    expect(both).toHaveLength(2);
    const unpacked = fs.readdirSync(path.join(cache, "dashboard"));
    expect(unpacked).toEqual([expect.stringMatching(/^[0-9a-f]{16}$/)]);
    expect(fs.existsSync(path.join(cache, "dashboard", unpacked[0]!, ".next/BUILD_ID"))).toBe(true);
    // Started again: the same folder, nothing unpacked anew.
    const inode = fs.statSync(path.join(cache, "dashboard", unpacked[0]!, ".next/BUILD_ID")).ino;
    await project.dashboardFirstPage("seen-on-the-page", { REQWATCH_CACHE_DIR: cache });
    expect(fs.statSync(path.join(cache, "dashboard", unpacked[0]!, ".next/BUILD_ID")).ino).toBe(inode);
    // A cache folder that cannot be made (a file is in its way): the dashboard still answers.
    const blocked = path.join(parent, "a-file-not-a-folder");
    fs.writeFileSync(blocked, "");
    await project.dashboardFirstPage("seen-on-the-page", { REQWATCH_CACHE_DIR: blocked });
  }, 120_000);

  it("says in one line how to fix SQLite's binding when it cannot load, from every command and the library", async () => {
    const binary = path.join(project.dir, `node_modules/better-sqlite3/prebuilds/${process.platform}-${process.arch}.node`);
    const aside = `${binary}.aside`;
    const expected =
      /^SQLite cannot load: better-sqlite3 13\.\d+\.\d+ on Node\.js [\d.]+, [a-z0-9]+-[a-z0-9]+: its binary (is missing|does not load \(.+\))\. To fix it, reinstall your dependencies \(rm -rf node_modules && npm install\)\.$/;
    for (const damage of ["missing", "not a library"]) {
      fs.renameSync(binary, aside);
      if (damage === "not a library") fs.writeFileSync(binary, "not a shared object");
      try {
        for (const command of [["list"], ["get", "r1"], ["create", "--workspace", "gw"], ["recover"]]) {
          const result = project.reqwatch([...command, "--state-dir", ".reqwatch"]);
          expect(result.status, `${damage}: reqwatch ${command.join(" ")}`).toBe(1);
          const lines = withoutMachineNotices(result.stderr).trim().split("\n");
          expect(lines, `${damage}: reqwatch ${command.join(" ")}`).toHaveLength(1);
          expect(lines[0]!.replace(/^reqwatch: /, "")).toMatch(expected);
        }
        const library = project.node([
          "-e",
          'try { require("reqwatch").openTracker({ stateDir: ".reqwatch" }); } catch (error) { console.log(error.code, error.message); }',
        ]);
        expect(library.stdout.startsWith("NO_SQLITE ")).toBe(true);
        expect(library.stdout.slice("NO_SQLITE ".length).trim()).toMatch(expected);
        const dashboard = await project.dashboardFirstPage("never").catch((error: Error) => error.message);
        expect(dashboard).toMatch(/reqwatch dashboard exited \(1\)/);
        expect(dashboard).toMatch(/SQLite cannot load: better-sqlite3/);
      } finally {
        fs.rmSync(binary, { force: true });
        fs.renameSync(aside, binary);
      }
    }
    expect(project.reqwatch(["list", "--state-dir", ".reqwatch"]).status).toBe(0);
  }, 120_000);

  it("stops at once on Node 20, with one line naming the Node found and the one needed", () => {
    const old = lineToolchain("20");
    const needed = supportedLines()[0]!.node;
    const line = `needs Node.js ${needed} or newer; this is Node.js 20.20.2 (${fs.realpathSync(old.node)}).`;
    const cli = spawnSync(old.node, [project.bin, "list"], { cwd: project.dir, env: old.env, encoding: "utf8" });
    expect(cli).toMatchObject({ status: 1, stdout: "", stderr: `reqwatch: ${line}\n` });
    for (const [kind, args] of [
      ["CommonJS", ["-e", 'try { require("reqwatch"); } catch (error) { console.log(error.code, error.message); }']],
      ["ESM", ["--input-type=module", "-e", 'try { await import("reqwatch"); } catch (error) { console.log(error.code, error.message); }']],
    ] as const) {
      const library = spawnSync(old.node, args, { cwd: project.dir, env: old.env, encoding: "utf8" });
      expect(library.stdout, kind).toBe(`ERR_REQWATCH_UNSUPPORTED_NODE reqwatch ${line}\n`);
      expect(library.status, kind).toBe(0);
    }
    // Not caught: its line and the one frame in reqwatch's entry that threw it, not the loader's.
    const uncaught = spawnSync(old.node, ["-e", 'require("reqwatch")'], { cwd: project.dir, env: old.env, encoding: "utf8" });
    expect(uncaught.status).toBe(1);
    expect(uncaught.stderr).toContain(`\nError: reqwatch ${line}\n`);
    expect(uncaught.stderr.match(/^ {4}at /gm)).toEqual(["    at "]);
    expect(uncaught.stderr).toMatch(/^ {4}at .*node_modules\/reqwatch\/dist\/index\.cjs:\d+:\d+\)$/m);
  }, 120_000);
});
