import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TelemetryStatus } from "../../lib/telemetry/startTelemetry";
import { CLAUDE_CODE_FIXTURES } from "../helpers/claudeCodeExports";
import { childEnv, eventually, freePort, waitForExit, withOutput } from "../helpers/processes";
import { recordedExports, sendExports } from "../helpers/recordedExports";
import { tempParent, tempStateDir } from "../helpers/stateDir";

// The user's one receiver and one store of received telemetry (in reqwatch's cache folder), read by
// every dashboard of that user: real dashboard servers (dist/server.cjs), two state folders, one
// cache folder of the test's own.
const SERVER = path.resolve(__dirname, "../../dist/server.cjs");
const SESSION = "09c50f3d-627c-46e9-84ea-8248d62ab9c1";
const running: ChildProcess[] = [];
const env = (vars: Record<string, string>) => vars as NodeJS.ProcessEnv;

/** Once a server has printed `line` (at any time since it started). */
const said = (child: { output: () => string }, line: string) => eventually(() => (child.output().includes(line) ? true : undefined), 60_000, 50);
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** A dashboard server on `stateDir`, its received telemetry in the cache folder `cacheDir` (the default: REQWATCH_TELEMETRY_DIR unset). */
async function aServer(stateDir: string, cacheDir: string, otlpPort: number) {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...childEnv(),
    NEXT_TELEMETRY_DISABLED: "1",
    REQWATCH_STATE_DIR: stateDir,
    REQWATCH_CACHE_DIR: cacheDir,
    REQWATCH_OTLP_PORT: String(otlpPort),
  };
  delete env.REQWATCH_TELEMETRY_DIR;
  const child = withOutput(spawn(process.execPath, [SERVER, "--hostname", "127.0.0.1", "--port", String(port)], { env, stdio: ["ignore", "pipe", "pipe"] }));
  running.push(child);
  const url = `http://127.0.0.1:${port}`;
  await said(child, `dashboard on ${url}/`);
  const get = async <T>(route: string) => (await (await fetch(`${url}${route}`)).json()) as T;
  return {
    child,
    url,
    health: async () => (await get<{ telemetry: TelemetryStatus }>("/api/health")).telemetry,
    turns: async () => (await get<{ items: { requestId: string; state: string; sessionId: string | null }[] }>("/api/requests?source=otel&limit=50")).items,
    sessions: async () => (await get<{ sessions: { sessionId: string }[] }>("/api/sessions")).sessions.map((session) => session.sessionId),
  };
}

describe("one receiver and one store per user", () => {
  it("two dashboards of two folders: the first receives, both show the same session; killed, the second receives on the same port and a new export lands", async () => {
    const cacheDir = path.join(tempParent(), "cache");
    const otlpPort = await freePort();
    const otlp = `http://127.0.0.1:${otlpPort}`;
    const first = await aServer(tempStateDir(), cacheDir, otlpPort);
    await said(first.child, `reqwatch: receiving OpenTelemetry (OTLP/HTTP) on ${otlp}`);
    const secondFolder = tempStateDir();
    const second = await aServer(secondFolder, cacheDir, otlpPort);
    await said(second.child, `reqwatch: OpenTelemetry is received by another dashboard (pid ${first.child.pid}`);

    // Health says which process receives, on both.
    expect(await first.health()).toMatchObject({
      receiver: { url: otlp, error: null },
      receivedBy: { pid: first.child.pid, thisDashboard: true },
      file: path.join(cacheDir, "telemetry", "telemetry.db"),
    });
    expect(await second.health()).toMatchObject({
      receiver: { url: otlp, error: null },
      receivedBy: { pid: first.child.pid, thisDashboard: false },
      file: path.join(cacheDir, "telemetry", "telemetry.db"),
    });
    // The shared folder is the user's alone.
    expect(fs.statSync(path.join(cacheDir, "telemetry")).mode & 0o777).toBe(0o700);

    await sendExports(otlp, recordedExports(path.join(CLAUDE_CODE_FIXTURES, "plain")));
    for (const dashboard of [first, second]) {
      expect(await eventually(async () => ((await dashboard.turns()).length ? dashboard.turns() : undefined))).toEqual([
        expect.objectContaining({ state: "completed", sessionId: SESSION }),
      ]);
      expect(await dashboard.sessions()).toContain(SESSION);
    }

    // The receiving dashboard dies without a word: the second sees its lease's holder gone and takes it.
    first.child.kill("SIGKILL");
    await waitForExit(first.child);
    await said(second.child, `reqwatch: the dashboard that received OpenTelemetry (pid ${first.child.pid}) is gone; this one receives now`);
    await said(second.child, `reqwatch: receiving OpenTelemetry (OTLP/HTTP) on ${otlp}`);
    expect(await second.health()).toMatchObject({ receiver: { url: otlp, error: null }, receivedBy: { pid: second.child.pid, thisDashboard: true } });
    await sendExports(otlp, recordedExports(path.join(CLAUDE_CODE_FIXTURES, "tool")));
    const turns = await eventually(async () => ((await second.turns()).length === 2 ? second.turns() : undefined));
    expect(turns.map((turn) => turn.state)).toEqual(["completed", "completed"]);
    // Nothing of it in either state folder.
    expect(fs.existsSync(path.join(secondFolder, "telemetry.db"))).toBe(false);
  }, 90_000);

  it("its port held by another program (an earlier dashboard, a collector): Health says so, and once it is freed the receiver listens there with no restart", async () => {
    const otlpPort = await freePort();
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(otlpPort, "127.0.0.1", resolve));
    const dashboard = await aServer(tempStateDir(), path.join(tempParent(), "cache"), otlpPort);
    await said(dashboard.child, `reqwatch: trying port ${otlpPort} again in 10 s`);
    expect((await dashboard.health()).receiver).toEqual({
      url: null,
      error: `port ${otlpPort} is taken (another collector?): set --otlp-port or REQWATCH_OTLP_PORT to another, or off`,
    });

    await new Promise((resolve) => squatter.close(resolve));
    await said(dashboard.child, `reqwatch: receiving OpenTelemetry (OTLP/HTTP) on http://127.0.0.1:${otlpPort}`);
    await sendExports(`http://127.0.0.1:${otlpPort}`, recordedExports(path.join(CLAUDE_CODE_FIXTURES, "plain")));
    expect(await eventually(async () => ((await dashboard.turns()).length ? dashboard.turns() : undefined))).toEqual([
      expect.objectContaining({ state: "completed", sessionId: SESSION }),
    ]);
  }, 90_000);

  it("REQWATCH_TELEMETRY_DIR names a folder of its own, and a relative path or a folder another user owns is refused with the reason", async () => {
    const { telemetrySettings } = await import("../../lib/telemetry/telemetrySettings");
    const { ensureOwnFolder } = await import("../../lib/telemetry/sharedTelemetry");
    expect(telemetrySettings(env({ REQWATCH_CACHE_DIR: "/tmp/c" })).dir).toBe("/tmp/c/telemetry");
    expect(telemetrySettings(env({ REQWATCH_TELEMETRY_DIR: "/srv/own" })).dir).toBe("/srv/own");
    expect(telemetrySettings(env({ REQWATCH_TELEMETRY_DIR: "state-folder" })).dir).toBeNull();
    expect(() => telemetrySettings(env({ REQWATCH_TELEMETRY_DIR: "here" }))).toThrow(
      'Invalid REQWATCH_TELEMETRY_DIR: "here". Use an absolute path (a folder of its own), or state-folder to keep what is received beside each state folder\'s index.',
    );
    // Another user's folder: one given to nobody (root may), else /tmp, which is root's.
    let foreign = "/tmp";
    if (process.getuid?.() === 0) {
      foreign = path.join(tempParent(), "nobody's");
      fs.mkdirSync(foreign);
      fs.chownSync(foreign, 65534, 65534);
    }
    expect(() => ensureOwnFolder(foreign)).toThrow(
      /^The received telemetry's folder .+ belongs to uid \d+, not to this user \(uid \d+\): reqwatch keeps what agents send only in a folder of the user's own\. Set REQWATCH_TELEMETRY_DIR to one\.$/,
    );
    const loose = path.join(tempParent(), "loose");
    fs.mkdirSync(loose, { mode: 0o755 });
    fs.chmodSync(loose, 0o755);
    ensureOwnFolder(loose);
    expect(fs.statSync(loose).mode & 0o777).toBe(0o700);
  });
});
