import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempParent } from "../helpers/stateDir";

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
  // npm pack, then an install into an empty project, as a user would: better-sqlite3 compiles there.
  it("installs into an empty project with only what the library and the CLI need, and works from CommonJS, ESM, npx and strict TypeScript 5 and 7", () => {
    const where = tempParent();
    // --ignore-scripts: dist/ is built already (globalSetup); a rebuild here would rewrite it under the other tests' feet.
    const packed = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", where], ROOT)) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
    const tarball = path.join(where, packed[0]!.filename);
    const files = packed[0]!.files.map((file) => file.path);
    expect(files.filter((file) => file.startsWith("tests/") || file.startsWith("app/") || file.startsWith("components/") || file.startsWith("bench/"))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(["bin/reqwatch.js", "dist/index.cjs", "dist/index.d.ts", "dist/cli.cjs", "dist/cli-mcpServer.cjs", "README.md"]));
    expect(files.filter((file) => file.startsWith("lib/"))).toEqual([]);

    const project = path.join(where, "project");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "a-gateway", version: "1.0.0", private: true }));
    npm(["install", tarball], project);
    const installed = npm(["ls", "--all", "--parseable"], project).trim().split("\n").slice(1);
    console.log(`packed ${packed[0]!.size} bytes (${packed[0]!.unpackedSize} unpacked, ${files.length} files); ${installed.length} packages installed`);
    // The dashboard's framework stays out of a project that wanted the library.
    for (const absent of ["next", "react", "react-dom", "@modelcontextprotocol/sdk", "commander", "chokidar"]) expect(fs.existsSync(path.join(project, "node_modules", absent)), absent).toBe(false);

    const version = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).version as string;
    expect(execFileSync("npx", ["--no-install", "reqwatch", "--version"], { cwd: project, encoding: "utf8" })).toBe(`${version}\n`);

    const cjs = node(["-e", 'const { openTracker } = require("reqwatch"); const t = openTracker({ stateDir: "state" }); t.create({ requestId: "r1", workspace: "gw" }); console.log(t.get("r1").state); t.close();'], project);
    expect(cjs).toMatchObject({ status: 0, stdout: "created\n" });
    const esm = node(["--input-type=module", "-e", 'import { openTracker, STATES } from "reqwatch"; const t = openTracker({ stateDir: "state" }); console.log(t.get("r1").workspace, STATES.length); t.close();'], project);
    expect(esm).toMatchObject({ status: 0, stdout: "gw 6\n" });

    const listed = spawnSync("npx", ["--no-install", "reqwatch", "list", "--json", "--state-dir", "state"], { cwd: project, encoding: "utf8" });
    expect(JSON.parse(listed.stdout).items.map((row: { requestId: string }) => row.requestId)).toEqual(["r1"]);
    expect(spawnSync("npx", ["--no-install", "reqwatch", "mcp", "--help"], { cwd: project, encoding: "utf8" }).status).toBe(0);

    // A TypeScript consumer, as strict as they come, with no @types of its own: on TypeScript 5 and 7.
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
  }, 600_000);
});
