import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "@playwright/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, freePort, waitForExit } from "../helpers/processes";

const ROOT = path.resolve(__dirname, "../..");
const npm = (args: string[], cwd: string) => execFileSync("npm", [...args, "--no-audit", "--no-fund"], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const node = (args: string[], cwd: string) => spawnSync(process.execPath, args, { cwd, encoding: "utf8" });

const STRICT = { strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, skipLibCheck: false, module: "nodenext", moduleResolution: "nodenext", target: "es2022", noEmit: true, types: [] };

/** What a gateway writes with the library: every call typed, wrong uses caught (each @ts-expect-error must be an error). */
const CONSUMER = `
import { openTracker, runWorker, isReqwatchError, STATES, type RequestRecord, type Tracker, type State } from "reqwatch";
const tracker: Tracker = openTracker({ stateDir: "state", recover: false });
const request: RequestRecord = tracker.create({ workspace: "gw", prompt: "hi", state: "queued" });
const state: State = request.state;
const page = tracker.list({ states: ["queued"], limit: 10 });
const first: string | undefined = page.items[0]?.requestId;
const claim = tracker.claimNext({ workspace: "gw" });
if (claim) tracker.complete(claim.request.requestId, claim.token, { fields: { output: "ok" } });
const worker = runWorker({ tracker, handler: (r) => ({ output: r.prompt ?? "" }), stopWhenIdle: true });
void worker.done.then((stats) => stats.completed + STATES.length);
try { tracker.get("../x"); } catch (error) { if (isReqwatchError(error, "BAD_INPUT")) console.log(error.message); }
const story = tracker.sessions.start();
if (story.ok) console.log(story.value.session.session_id, first, state);
// @ts-expect-error: not a state
tracker.transition(request.requestId, "done");
// @ts-expect-error: workspace is required
tracker.create({ prompt: "x" });
tracker.close();
`;

describe("the packed package", () => {
  let where: string;
  let project: string;
  let files: string[];

  // npm pack, then an install into an empty project, as a user would: better-sqlite3 compiles there.
  beforeAll(() => {
    if (!fs.existsSync(path.join(ROOT, "dist/dashboard/.next/BUILD_ID"))) throw new Error("no prebuilt dashboard in dist/dashboard: run `npm run build` (npm test does it first)");
    // One install for every test below: not a tempParent(), which goes after each test.
    where = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-package-"));
    // --ignore-scripts: dist/ is built already (globalSetup, and npm test's build); a rebuild here would rewrite it under the other tests' feet.
    const packed = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", where], ROOT)) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
    files = packed[0]!.files.map((file) => file.path);
    project = path.join(where, "project");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "a-gateway", version: "1.0.0", private: true }));
    npm(["install", path.join(where, packed[0]!.filename)], project);
    const installed = npm(["ls", "--all", "--parseable"], project).trim().split("\n").slice(1);
    console.log(`packed ${packed[0]!.size} bytes (${packed[0]!.unpackedSize} unpacked, ${files.length} files); ${installed.length} packages installed`);
  }, 600_000);
  afterAll(() => fs.rmSync(where, { recursive: true, force: true }));

  it("holds no sources or tests, and installs only what the library and the CLI need", () => {
    expect(files.filter((file) => /^(tests|app|components|bench|lib|server|scripts)\//.test(file))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(["bin/reqwatch.js", "dist/index.cjs", "dist/index.d.ts", "dist/cli.cjs", "dist/cli-mcpServer.cjs", "dist/rebuildWorker.cjs", "dist/rebuildThread.cjs", "dist/server.cjs", "dist/dashboard/.next/BUILD_ID", "README.md"]));
    // The dashboard's framework travels inside the package, prebuilt; better-sqlite3 is the user's own, compiled for their Node.
    expect(files.filter((file) => file.startsWith("dist/dashboard/") && /better-sqlite3\/|\.node$/.test(file))).toEqual([]);
    for (const absent of ["next", "react", "react-dom", "@modelcontextprotocol/sdk", "commander", "chokidar"]) expect(fs.existsSync(path.join(project, "node_modules", absent)), absent).toBe(false);
  });

  it("works from CommonJS, ESM and npx", () => {
    const version = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).version as string;
    expect(execFileSync("npx", ["--no-install", "reqwatch", "--version"], { cwd: project, encoding: "utf8" })).toBe(`${version}\n`);

    const cjs = node(["-e", 'const { openTracker } = require("reqwatch"); const t = openTracker({ stateDir: "state" }); t.create({ requestId: "r1", workspace: "gw" }); console.log(t.get("r1").state); t.close();'], project);
    expect(cjs).toMatchObject({ status: 0, stdout: "created\n" });
    const esm = node(["--input-type=module", "-e", 'import { openTracker, STATES } from "reqwatch"; const t = openTracker({ stateDir: "state" }); console.log(t.get("r1").workspace, STATES.length); t.close();'], project);
    expect(esm).toMatchObject({ status: 0, stdout: "gw 6\n" });

    const listed = spawnSync("npx", ["--no-install", "reqwatch", "list", "--json", "--state-dir", "state"], { cwd: project, encoding: "utf8" });
    expect(JSON.parse(listed.stdout).items.map((row: { requestId: string }) => row.requestId)).toEqual(["r1"]);
    expect(spawnSync("npx", ["--no-install", "reqwatch", "mcp", "--help"], { cwd: project, encoding: "utf8" }).status).toBe(0);
  });

  it("serves the prebuilt dashboard with `npx reqwatch dashboard`, on ./.reqwatch of the folder it runs in", async () => {
    const seeded = node(["-e", 'const t = require("reqwatch").openTracker({ stateDir: ".reqwatch" }); t.create({ requestId: "seen-on-the-page", workspace: "gw" }); t.close();'], project);
    expect(seeded.status, seeded.stderr).toBe(0);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const started = Date.now();
    // Its own process group, so the test stops npx, the CLI and the server together, as Ctrl-C does.
    const dashboard = spawn("npx", ["--no-install", "reqwatch", "dashboard", "--port", String(port)], { cwd: project, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    dashboard.stdout.on("data", (chunk) => (output += chunk));
    dashboard.stderr.on("data", (chunk) => (output += chunk));
    try {
      const page = await eventually(async () => {
        if (dashboard.exitCode !== null) throw new Error(`the dashboard exited (${dashboard.exitCode}):\n${output}`);
        const response = await fetch(`${url}/requests`).catch(() => undefined);
        return response?.ok ? response.text() : undefined;
      }, 60_000);
      console.log(`first page ${Date.now() - started} ms after the command`);
      expect(page).toContain("seen-on-the-page");
      expect(output).toContain(`reqwatch: state directory ${path.join(project, ".reqwatch")}`);
      const status = (await (await fetch(`${url}/api/status`)).json()) as { counts: Record<string, number> };
      expect(status.counts.created).toBe(1);
      // The browser's code is served from the package too.
      const script = /\/_next\/static\/[^"]+\.js/.exec(page)?.[0];
      expect(script).toBeDefined();
      const asset = await fetch(`${url}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("content-type")).toMatch(/javascript/);

      // In a browser: the page runs (its code, its event stream), and a request the gateway writes now appears in the table.
      const browser = await chromium.launch({ executablePath: process.env.REQWATCH_CHROMIUM ?? "/usr/bin/chromium", args: ["--disable-gpu", "--no-first-run"] });
      try {
        const tab = await browser.newPage();
        await tab.goto(`${url}/requests`);
        await expect.poll(() => tab.getByRole("link", { name: "seen-on-the-page" }).count()).toBe(1);
        const written = node(["-e", 'const t = require("reqwatch").openTracker({ stateDir: ".reqwatch" }); t.create({ requestId: "arrived-live", workspace: "gw", state: "queued" }); t.close();'], project);
        expect(written.status, written.stderr).toBe(0);
        await expect.poll(() => tab.getByRole("link", { name: "arrived-live" }).count(), { timeout: 15_000 }).toBe(1);
      } finally {
        await browser.close();
      }
    } finally {
      const exited = waitForExit(dashboard);
      process.kill(-dashboard.pid!, "SIGINT");
      await exited;
    }
  }, 120_000);

  it("type-checks a strict TypeScript consumer, with no @types of its own, on TypeScript 5 and 7", () => {
    fs.writeFileSync(path.join(project, "consumer.mts"), CONSUMER);
    fs.writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: STRICT, files: ["consumer.mts"] }));
    for (const typescript of ["typescript@5", "typescript@7"]) {
      const checker = path.join(where, typescript);
      fs.mkdirSync(checker);
      npm(["install", "--prefix", checker, typescript], project);
      const checked = spawnSync(process.execPath, [path.join(checker, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", "tsconfig.json"], { cwd: project, encoding: "utf8" });
      expect(`${checked.stdout}${checked.stderr}`, typescript).toBe("");
      expect(checked.status, typescript).toBe(0);
    }
  }, 300_000);
});
