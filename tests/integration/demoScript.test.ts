import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const DEMO = path.resolve(__dirname, "../../scripts/demo.mjs");
const parents: string[] = [];
afterEach(() => {
  for (const parent of parents.splice(0)) fs.rmSync(parent, { recursive: true, force: true });
});

/** `npm run demo -- <args>`, with its temporary folder in one of the test's own (to see that nothing was made). */
function demo(args: string[]) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-demo-args-"));
  parents.push(tmp);
  const result = spawnSync(process.execPath, [DEMO, ...args], { encoding: "utf8", env: { ...process.env, TMPDIR: tmp }, timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, made: fs.readdirSync(tmp) };
}

describe("npm run demo's options", () => {
  it("--help says the port, --keep and the thresholds it sets, with their defaults", () => {
    const help = demo(["--help"]);
    expect(help).toMatchObject({ code: 0, stderr: "", made: [] });
    expect(help.stdout).toMatch(/^Usage: npm run demo -- \[--port <port>\] \[--keep\]\n/);
    expect(help.stdout).toContain("--port <port>  the dashboard's port (default: REQWATCH_PORT, else 4600 or the next free one)");
    expect(help.stdout).toContain("REQWATCH_QUEUED_STUCK_AFTER (default 15s), REQWATCH_HEARTBEAT_TIMEOUT (default 6s), REQWATCH_MONITOR_INTERVAL (default 2s)");
  });

  it("an unknown option or a port that is not one is said in one line (then the usage), exits 2 and starts nothing", () => {
    const unknown = demo(["--prot", "4601"]);
    expect(unknown).toMatchObject({ code: 2, stdout: "", made: [] });
    expect(unknown.stderr).toMatch(/^demo: Unknown option '--prot'.*\n\nUsage: npm run demo -- /);
    const port = demo(["--port", "http"]);
    expect(port).toMatchObject({ code: 2, stdout: "", stderr: 'demo: --port "http" is not a port (1 to 65535)\n', made: [] });
  });
});
