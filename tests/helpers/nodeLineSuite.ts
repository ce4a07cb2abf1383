import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aCollector, waitFor } from "./otlpCollector";
import { waitForExit } from "./processes";
import {
  ConsumerProject,
  consumerParent,
  LIFECYCLE_CJS,
  LIFECYCLE_ESM,
  lineToolchain,
  packTarball,
  STRICT_CONSUMER,
  STRICT_TSCONFIG,
  supportedLines,
  withoutMachineNotices,
} from "./consumer";

// The packed reqwatch where its users are: each supported Node line (scripts/node.sh pins a release
// and the npm it comes with: npm 12 on 26, which runs no install script it was not told to), in an
// empty project, with the README's commands. What crashed on Node 24 before (better-sqlite3 12
// aborted in more than half the runs, at exit) may crash only sometimes, so each is run many times
// and every outcome is kept: a failure says how many runs of how many crashed, and how.
const RUNS = 20;
const DASHBOARD_STARTS = 10;
/** What a consumer gets: reqwatch and better-sqlite3 (native), with the header package better-sqlite3 declares. */
const RUNTIME_PACKAGES = ["better-sqlite3", "node-addon-api", "reqwatch"];

/**
 * The suite for one Node line, in a test file of its own (tests/integration/nodeLine<line>.test.ts) so
 * the lines run side by side: each is minutes of processes started one after another.
 */
export function describeNodeLine(line: string): void {
  const found = supportedLines().find((supported) => supported.line === line);
  if (!found) throw new Error(`scripts/node.sh pins no Node line ${line}`);
  // Every line scripts/node.sh pins has its file: a line added there is tested too.
  const missing = supportedLines().filter((supported) => !fs.existsSync(path.join(__dirname, "..", "integration", `nodeLine${supported.line}.test.ts`)));
  if (missing.length > 0) throw new Error(`no tests/integration/nodeLine<line>.test.ts for Node ${missing.map((supported) => supported.line).join(", ")}`);
  let parent: string;
  let tarball: string;
  const checkers: Record<string, string> = {};

  beforeAll(() => {
    parent = consumerParent("node-lines");
    tarball = packTarball(parent).path;
    // The type checkers, once: each line runs them with its own node.
    for (const typescript of ["typescript@5", "typescript@7"]) {
      const folder = path.join(parent, typescript);
      execFileSync("npm", ["install", "--prefix", folder, "--no-audit", "--no-fund", typescript], { stdio: "pipe" });
      checkers[typescript] = path.join(folder, "node_modules/typescript/bin/tsc");
    }
  }, 600_000);
  afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

  describe(`on Node ${line} (${found.node}, npm ${found.npm})`, () => {
    let project: ConsumerProject;
    beforeAll(() => {
      project = ConsumerProject.install(tarball, parent, lineToolchain(line));
      console.log(`Node ${line}: npm install of the tarball took ${Math.round(project.installMs)} ms`);
    }, 300_000);

    it("installs with `npm install <tarball>` alone: no script to approve, nothing compiled, only the runtime dependencies", () => {
      const said = withoutMachineNotices(project.installOutput)
        .split("\n")
        .filter((text) => text.trim() !== "");
      expect(said).toEqual([expect.stringMatching(/^added 3 packages in /)]);
      expect(project.installedPackages()).toEqual(RUNTIME_PACKAGES);
      // A compiled binding would be in build/ and loaded first; the one loaded is the package's own prebuilt binary.
      expect(fs.existsSync(path.join(project.dir, "node_modules/better-sqlite3/build"))).toBe(false);
      const loaded = project.node([
        "-e",
        'require("reqwatch").openTracker({ stateDir: "probe" }).close(); console.log(Object.keys(require.cache).filter((file) => file.endsWith(".node")).join("\\n"));',
      ]);
      expect(loaded.stderr).toBe("");
      expect(loaded.stdout.trim()).toBe(path.join(project.dir, `node_modules/better-sqlite3/prebuilds/${process.platform}-${process.arch}.node`));
    });

    it(`runs the library from CommonJS and ESM, ${RUNS} times each, and none crashes`, () => {
      for (const [kind, args] of [
        ["CommonJS", ["-e", LIFECYCLE_CJS]],
        ["ESM", ["--input-type=module", "-e", LIFECYCLE_ESM]],
      ] as const) {
        const failed: string[] = [];
        for (let run = 1; run <= RUNS; run++) {
          const result = project.node([...args, `state-${kind}`]);
          if (result.status !== 0 || result.stdout !== `completed ok ${run}\n`)
            failed.push(`run ${run}: exit ${result.status ?? result.signal}, ${JSON.stringify(result.stdout)} ${result.stderr.slice(0, 400)}`);
        }
        expect(failed, `${kind}: ${failed.length} of ${RUNS} runs failed`).toEqual([]);
      }
    }, 120_000);

    it(`runs the CLI through a request's whole life, ${RUNS} times, and none crashes`, () => {
      const failed: string[] = [];
      const cli = (args: string[]) => project.node([project.bin, ...args, "--state-dir", "cli-state"]);
      for (let run = 1; run <= RUNS; run++) {
        const created = cli(["create", "--workspace", "gw", "--state", "queued"]);
        const id = created.stdout.trim();
        const steps = [created, cli(["update", id, "--state", "processing"]), cli(["update", id, "--state", "completed", "--output", "ok"]), cli(["get", id])];
        const broken = steps.find((step) => step.status !== 0);
        if (broken) failed.push(`run ${run}: exit ${broken.status ?? broken.signal} ${broken.stderr.slice(0, 400)}`);
        else if (JSON.parse(steps[3]!.stdout).state !== "completed") failed.push(`run ${run}: ${steps[3]!.stdout}`);
      }
      expect(failed, `${failed.length} of ${RUNS} runs failed`).toEqual([]);
      // And the README's way to run it, through npx.
      const listed = JSON.parse(project.reqwatch(["list", "--state-dir", "cli-state", "--json"]).stdout) as { items: { state: string }[] };
      expect(listed.items.map((item) => item.state)).toEqual(Array.from({ length: RUNS }, () => "completed"));
    }, 180_000);

    it("exports the CLI's lifecycles with `reqwatch otel`, over OTLP/HTTP protobuf, and stops on Ctrl-C", async () => {
      const collector = await aCollector();
      const otel = spawn(project.toolchain.node, [project.bin, "otel", "--state-dir", "cli-state"], {
        cwd: project.dir,
        env: { ...project.toolchain.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url.replace(/\/v1\/traces$/, ""), OTEL_SERVICE_NAME: `gateway-on-${line}` },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      otel.stderr.on("data", (chunk) => (stderr += chunk));
      try {
        // The CLI test above left RUNS completed requests: a create span for each.
        await waitFor(
          () =>
            new Set(
              collector
                .spans()
                .filter((span) => span.kind === 4)
                .map((span) => span.traceId),
            ).size === RUNS,
          30_000,
        );
        expect(collector.encodings()[0]).toBe("application/x-protobuf");
      } finally {
        const exited = waitForExit(otel);
        otel.kill("SIGINT");
        expect(await exited, stderr).toBe(0);
        await collector.close();
      }
    }, 60_000);

    it("type-checks a strict TypeScript consumer on TypeScript 5 and 7", () => {
      fs.writeFileSync(path.join(project.dir, "consumer.mts"), STRICT_CONSUMER);
      fs.writeFileSync(path.join(project.dir, "tsconfig.json"), JSON.stringify({ compilerOptions: STRICT_TSCONFIG, files: ["consumer.mts"] }));
      for (const [typescript, tsc] of Object.entries(checkers)) {
        const checked = spawnSync(project.toolchain.node, [tsc, "--noEmit", "-p", "tsconfig.json"], { cwd: project.dir, encoding: "utf8" });
        expect(`${checked.stdout}${checked.stderr}`, typescript).toBe("");
        expect(checked.status, typescript).toBe(0);
      }
    }, 120_000);

    it(`serves the dashboard with \`npx reqwatch dashboard\`: ${DASHBOARD_STARTS} starts, ${DASHBOARD_STARTS} first pages`, async () => {
      const seeded = project.node([
        "-e",
        'const t = require("reqwatch").openTracker({ stateDir: ".reqwatch" }); t.create({ requestId: "seen-on-the-page", workspace: "gw" }); t.close();',
      ]);
      expect(seeded.status, seeded.stderr).toBe(0);
      const failed: string[] = [];
      const times: number[] = [];
      for (let start = 1; start <= DASHBOARD_STARTS; start++) {
        try {
          times.push((await project.dashboardFirstPage("seen-on-the-page")).ms);
        } catch (error) {
          failed.push(`start ${start}: ${(error as Error).message.slice(0, 600)}`);
        }
      }
      expect(failed, `${failed.length} of ${DASHBOARD_STARTS} starts failed`).toEqual([]);
      console.log(`Node ${line}: first page after ${times.map((ms) => Math.round(ms)).join(", ")} ms`);
    }, 300_000);

    it(`answers an MCP client: ${RUNS} sessions, each listing the tools and the requests`, async () => {
      const seeded = project.node([
        "-e",
        'const t = require("reqwatch").openTracker({ stateDir: "mcp-state" }); t.create({ requestId: "asked-by-an-agent", workspace: "gw", state: "queued" }); t.close();',
      ]);
      expect(seeded.status, seeded.stderr).toBe(0);
      const env = Object.fromEntries(Object.entries(project.toolchain.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
      const failed: string[] = [];
      for (let session = 1; session <= RUNS; session++) {
        const transport = new StdioClientTransport({
          command: project.toolchain.node,
          args: [project.bin, "mcp", "--state-dir", "mcp-state"],
          cwd: project.dir,
          env,
          stderr: "pipe",
        });
        let stderr = "";
        transport.stderr?.on("data", (chunk) => (stderr += chunk));
        const client = new Client({ name: "a-coding-agent", version: "1.0.0" });
        try {
          await client.connect(transport);
          // The server's process, to see how it ends: a crash at exit is a crash too (the SDK keeps it in a private field).
          const server = (transport as unknown as { _process: ChildProcess })._process;
          const { tools } = await client.listTools();
          const listed = await client.callTool({ name: "list_requests", arguments: {} });
          const text = (listed.content as { text: string }[]).map((part) => part.text).join("");
          if (tools.length === 0 || !text.includes("asked-by-an-agent")) failed.push(`session ${session}: ${tools.length} tools, ${text.slice(0, 200)}`);
          await client.close();
          if (server.exitCode !== 0) failed.push(`session ${session}: the server ended with ${server.exitCode ?? server.signalCode} ${stderr.slice(0, 400)}`);
        } catch (error) {
          failed.push(`session ${session}: ${(error as Error).message} ${stderr.slice(0, 400)}`);
          await client.close();
        }
      }
      expect(failed, `${failed.length} of ${RUNS} sessions failed`).toEqual([]);
    }, 180_000);
  });
}
