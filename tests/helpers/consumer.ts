import { execFileSync, spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eventually, freePort, waitForExit } from "./processes";

const ROOT = path.resolve(__dirname, "../..");

/** A Node line the project supports, as scripts/node.sh pins it: its release and the npm its users have with it. */
export interface NodeLine {
  line: string;
  node: string;
  npm: string;
}

/** The supported lines, lowest first (scripts/node.sh is their one source). */
export function supportedLines(): NodeLine[] {
  return execFileSync("bash", [path.join(ROOT, "scripts/node.sh"), "lines"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((row) => {
      const [line, node, npm] = row.split(/\s+/) as [string, string, string];
      return { line, node, npm };
    });
}

/** `line`'s node (installed into .toolchain/ when missing), and an environment with its node, npm and npx first. */
export function lineToolchain(line: string): { node: string; env: NodeJS.ProcessEnv } {
  const bin = execFileSync("bash", [path.join(ROOT, "scripts/node.sh"), "bin", line], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` };
  return { node: path.join(bin, "node"), env };
}

/** This machine's own npm configuration names a setting newer npm no longer knows (nodedir), and npm and npx say so on every command. */
const MACHINE_CONFIG_NOTICE = /^npm warn Unknown (user|env|global) config "nodedir".*\n?/gm;

/** What a command printed, without npm's notices about this machine's own configuration. */
export function withoutMachineNotices(text: string): string {
  return text.replace(MACHINE_CONFIG_NOTICE, "");
}

/** `npm run package` into `destination`: the tarball a user installs. */
export function packTarball(destination: string): { path: string; files: string[]; size: number; unpackedSize: number } {
  const script = `import("./scripts/package.mjs").then(({ pack }) => process.stdout.write(JSON.stringify(pack({ destination: ${JSON.stringify(destination)}, build: false })))).catch((error) => { process.stderr.write(error.message); process.exitCode = 1; })`;
  // A build older than its sources is refused (scripts/package.mjs), not packed: said as it is.
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" });
  if (run.status !== 0) throw new Error(run.stderr);
  const packed = JSON.parse(run.stdout) as { path: string; files: { path: string }[]; size: number; unpackedSize: number };
  return { ...packed, files: packed.files.map((file) => file.path) };
}

/**
 * An empty project that installed the packed reqwatch with the README's command, on one Node line:
 * `npm install <tarball>` with that line's npm, and nothing else (no approval, no rebuild).
 */
export class ConsumerProject {
  private constructor(
    readonly dir: string,
    /** The line's node binary, and an environment that has it, its npm and npx first. */
    readonly toolchain: { node: string; env: NodeJS.ProcessEnv },
    /** What `npm install` printed, stdout and stderr. */
    readonly installOutput: string,
    readonly installMs: number,
  ) {}

  static install(tarball: string, parent: string, toolchain: { node: string; env: NodeJS.ProcessEnv }): ConsumerProject {
    const { env } = toolchain;
    const dir = fs.mkdtempSync(path.join(parent, "project-"));
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "a-gateway", version: "1.0.0", private: true }));
    const started = performance.now();
    const installed = spawnSync("npm", ["install", tarball], { cwd: dir, env, encoding: "utf8" });
    const installMs = performance.now() - started;
    const output = `${installed.stdout}${installed.stderr}`;
    if (installed.status !== 0) throw new Error(`npm install ${tarball} failed (${installed.status}):\n${output}`);
    return new ConsumerProject(dir, toolchain, output, installMs);
  }

  /** Every package the install brought (npm ls), reqwatch included, by name. */
  installedPackages(): string[] {
    const listed = spawnSync("npm", ["ls", "--all", "--parseable"], { cwd: this.dir, env: this.toolchain.env, encoding: "utf8" });
    return listed.stdout
      .trim()
      .split("\n")
      .slice(1)
      .map((folder) => path.relative(path.join(this.dir, "node_modules"), folder).split(`${path.sep}node_modules${path.sep}`).at(-1)!)
      .sort();
  }

  node(args: string[], options: { input?: string } = {}): SpawnSyncReturns<string> {
    return spawnSync(this.toolchain.node, args, { cwd: this.dir, env: this.toolchain.env, encoding: "utf8", input: options.input });
  }

  /** The CLI as the README runs it: `npx reqwatch ...`. */
  reqwatch(args: string[]): SpawnSyncReturns<string> {
    return spawnSync("npx", ["--no-install", "reqwatch", ...args], { cwd: this.dir, env: this.toolchain.env, encoding: "utf8" });
  }

  /** The CLI's shim in node_modules, for a client that starts it itself (an MCP client). */
  get bin(): string {
    return path.join(this.dir, "node_modules/reqwatch/bin/reqwatch.js");
  }

  /**
   * `npx reqwatch dashboard` on a free port, given to `during` while it runs; then Ctrl-C to its process
   * group, as a person stops it. `running()` throws, with what the command printed, once it has exited.
   */
  async withDashboard<T>(
    during: (dashboard: { url: string; startedAt: number; running: () => void; output: () => string }) => Promise<T>,
    env: Record<string, string> = {},
  ): Promise<T> {
    const port = await freePort();
    const startedAt = performance.now();
    const dashboard = spawn("npx", ["--no-install", "reqwatch", "dashboard", "--port", String(port)], {
      cwd: this.dir,
      env: { ...this.toolchain.env, ...env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    dashboard.stdout.on("data", (chunk) => (output += chunk));
    dashboard.stderr.on("data", (chunk) => (output += chunk));
    const running = () => {
      if (dashboard.exitCode !== null || dashboard.signalCode !== null)
        throw new Error(`reqwatch dashboard exited (${dashboard.exitCode ?? dashboard.signalCode}):\n${output}`);
    };
    try {
      return await during({ url: `http://127.0.0.1:${port}`, startedAt, running, output: () => output });
    } finally {
      if (dashboard.exitCode === null && dashboard.signalCode === null) {
        const exited = waitForExit(dashboard);
        process.kill(-dashboard.pid!, "SIGINT");
        await exited;
      }
    }
  }

  /** Starts the dashboard and waits for `/requests` to answer with `expected` in the page: how long that took, and what the command printed. */
  dashboardFirstPage(expected: string, env: Record<string, string> = {}): Promise<{ ms: number; output: string }> {
    return this.withDashboard(async ({ url, startedAt, running, output }) => {
      await eventually(async () => {
        running();
        const response = await fetch(`${url}/requests`).catch(() => undefined);
        const text = response?.ok ? await response.text() : undefined;
        return text?.includes(expected) ? text : undefined;
      }, 60_000);
      return { ms: performance.now() - startedAt, output: output() };
    }, env);
  }
}

/** A parent folder for one test file's projects, removed at the end. */
export function consumerParent(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `reqwatch-${label}-`));
}

/** The library as a gateway uses it, once: create, claim, complete, read; the same from CommonJS and ESM. */
const LIFECYCLE = `
const tracker = openTracker({ stateDir: process.argv[1] });
const request = tracker.create({ workspace: "gw", state: "queued", prompt: "hi" });
const claim = tracker.claimNext({ workspace: "gw" });
tracker.complete(claim.request.requestId, claim.token, { fields: { output: "ok" } });
const read = tracker.get(request.requestId);
console.log(read.state, read.output, tracker.list({ limit: 100 }).items.length);
tracker.close();
`;
export const LIFECYCLE_CJS = `const { openTracker } = require("reqwatch");${LIFECYCLE}`;
export const LIFECYCLE_ESM = `import { openTracker } from "reqwatch";${LIFECYCLE}`;

/** A strict consumer's compiler options: what a careful gateway's tsconfig turns on. */
export const STRICT_TSCONFIG = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: false,
  module: "nodenext",
  moduleResolution: "nodenext",
  target: "es2022",
  noEmit: true,
  types: [],
};

/** What a gateway writes with the library: every call typed, wrong uses caught (each @ts-expect-error must be an error). */
export const STRICT_CONSUMER = `
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
// @ts-expect-error: a person's retry is the dashboard's and the CLI's, not the library's
tracker.retry({ ids: [request.requestId] });
tracker.close();
`;
