import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isReqwatchError } from "../../lib/model/errors";
import { migrate } from "../../lib/postgres/migrate";
import { MIGRATIONS, SCHEMA_VERSION } from "../../lib/postgres/migrations";
import { loadPg } from "../../lib/postgres/pgDriver";
import { openSharedTracker } from "../../lib/postgres/sharedTracker";
import { aClock } from "../helpers/clock";
import { aSharedTracker, postgresForFile, sqlOn } from "../helpers/postgres";
import { childEnv, eventually, firstLine, waitForExit, waitForLine, WORKERS } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";

const cluster = postgresForFile();

async function errorOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

/** A worker process on the shared store, as if on `host`: a state and cache folder of its own, sharing nothing but the database. */
function aWorkerOn(host: string, url: string, mode: "drain" | "hang") {
  const folder = fs.mkdtempSync(path.join(tempParent(), `${host}-`));
  const env = { ...childEnv(), REQWATCH_STATE_DIR: path.join(folder, "state"), REQWATCH_CACHE_DIR: path.join(folder, "cache") };
  return spawn(process.execPath, [path.join(WORKERS, "sharedWorker.cjs"), url, host, mode], { stdio: ["pipe", "pipe", "pipe"], env });
}

/** Every line a child writes to its stdout, once it has exited. */
function linesOf(child: ReturnType<typeof spawn>): Promise<string[]> {
  let out = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  return waitForExit(child).then(() => out.trim().split("\n"));
}

describe("migrations", () => {
  it("bring a new database to the newest version once, even with two processes opening it at once", async () => {
    const url = await cluster().newDatabase();
    await Promise.all([aSharedTracker(url), aSharedTracker(url), aSharedTracker(url)]);
    const versions = await sqlOn<{ version: number }>(url, "SELECT version FROM reqwatch_schema ORDER BY version");
    expect(versions.map((row) => row.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    const tables = await sqlOn<{ name: string }>(url, "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
    expect(tables.map((row) => row.name)).toEqual(["claims", "requests", "reqwatch_schema", "transitions"]);
  });

  it("refuse a database at a newer version than this code, saying so and writing nothing", async () => {
    const url = await cluster().newDatabase();
    await (await aSharedTracker(url)).create({ requestId: "kept", workspace: "w" });
    await sqlOn(url, "INSERT INTO reqwatch_schema (version) VALUES ($1)", [SCHEMA_VERSION + 1]);
    const error = await errorOf(openSharedTracker(url));
    expect(isReqwatchError(error, "BAD_INPUT")).toBe(true);
    expect(error.message).toContain(`has schema version ${SCHEMA_VERSION + 1}, newer than this reqwatch knows (${SCHEMA_VERSION}): upgrade reqwatch`);
    expect(await sqlOn(url, "SELECT request_id FROM requests")).toEqual([{ request_id: "kept" }]);
  });

  it("apply each version in one transaction: a version that fails leaves nothing of itself, and the next open tries it again", async () => {
    const url = await cluster().newDatabase();
    const { Pool } = await loadPg();
    const pool = new Pool({ connectionString: url });
    try {
      const broken = [...MIGRATIONS, "CREATE TABLE half_done (id int); SELECT no_such_function();"];
      const error = await errorOf(migrate(pool, url, broken));
      expect(error.message).toMatch(/schema version 2 could not be applied; nothing of it was kept: function no_such_function\(\) does not exist/);
      expect(await sqlOn(url, "SELECT to_regclass('half_done') AS t")).toEqual([{ t: null }]);
      expect(await sqlOn(url, "SELECT max(version) AS v FROM reqwatch_schema")).toEqual([{ v: 1 }]);
      expect(await migrate(pool, url, [...MIGRATIONS, "CREATE TABLE half_done (id int)"])).toBe(2);
      expect(await sqlOn(url, "SELECT max(version) AS v FROM reqwatch_schema")).toEqual([{ v: 2 }]);
    } finally {
      await pool.end();
    }
  });
});

describe("the address, the options and the input", () => {
  it("never shows the password: a wrong one, an unreachable server, a database that does not exist", async () => {
    const { tcpUrl, password } = cluster();
    const secret = "Sw0rdf1sh-$ecret";
    const refused = [
      await errorOf(openSharedTracker(tcpUrl("postgres", secret))),
      await errorOf(openSharedTracker(`postgresql://postgres:${secret}@127.0.0.1:1/postgres`)),
      await errorOf(openSharedTracker(tcpUrl("no_such_database", password))),
      // The driver also takes the password from the query string.
      await errorOf(openSharedTracker(`postgres://127.0.0.1:1/postgres?user=postgres&password=${encodeURIComponent(secret)}`)),
    ];
    expect(refused.map((error) => (error as { code?: string }).code)).toEqual(["FORBIDDEN", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND"]);
    expect(refused[3]!.message).toContain("postgres://127.0.0.1:1/postgres?user=postgres&password=***)");
    expect(refused[0]!.message).toMatch(/postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres\): password authentication failed for user "postgres"/);
    expect(refused[1]!.message).toContain("ECONNREFUSED");
    expect(refused[2]!.message).toContain('database "no_such_database" does not exist');
    for (const error of refused) {
      const shown = `${error.message} ${error.stack} ${JSON.stringify(error)}`;
      expect(shown).not.toContain(secret);
      expect(shown).not.toContain(encodeURIComponent(secret));
      expect(shown).not.toContain(password);
    }
    // The right password over TCP opens it.
    const tracker = await aSharedTracker(tcpUrl("postgres", password));
    expect(await tracker.get("none")).toBeNull();
  });

  it("refuses the local store's folder options by name, and bad options, before connecting", async () => {
    const url = await cluster().newDatabase();
    const messages = await Promise.all(
      [{ stateDir: "/tmp/x" }, { poolSize: 0 }, { hostName: "a" }].map(async (options) => (await errorOf(openSharedTracker(url, options as never))).message),
    );
    expect(messages).toEqual([
      `Option "stateDir" is the local store's; the shared store keeps everything in its database.`,
      `Option "poolSize" must be a whole number of at least 1.`,
      `Unknown option "hostName" of the shared store; it takes maxAttempts, backoff, heartbeatTimeoutMs, monitorIntervalMs, redact, host, poolSize, random, now.`,
    ]);
    expect(await sqlOn(url, "SELECT to_regclass('reqwatch_schema') AS t")).toEqual([{ t: null }]);
  });

  it("refuses the list filters it does not have yet, by name", async () => {
    const tracker = await aSharedTracker(await cluster().newDatabase());
    const error = await errorOf(tracker.list({ text: "hello" }));
    expect(isReqwatchError(error, "BAD_INPUT")).toBe(true);
    expect(error.message).toBe(`The shared store does not filter by "text" yet.`);
  });
});

describe("waiting for a result", () => {
  it("a wait outlives its lost listening connection: it listens again and catches up from the transitions", async () => {
    const url = await cluster().newDatabase();
    const tracker = await aSharedTracker(url);
    const worker = await aSharedTracker(url);
    await tracker.create({ requestId: "r1", workspace: "w", state: "queued" });
    const claim = (await worker.claimNext())!;
    const waiting = tracker.waitForResult("r1", { timeoutMs: 30_000 });
    const listening = () =>
      sqlOn<{ pid: number }>(url, "SELECT pid FROM pg_stat_activity WHERE application_name = 'reqwatch listener' AND datname = current_database()");
    const [listener] = await eventually(async () => ((await listening()).length === 1 ? listening() : undefined));
    await sqlOn(url, "SELECT pg_terminate_backend($1)", [listener!.pid]);
    // Completed while the listener may be gone: whichever comes first, the announcement or the catch-up, resolves the wait.
    await worker.complete("r1", claim.token, { output: "ok" });
    expect(await waiting).toMatchObject({ requestId: "r1", state: "completed", output: "ok" });
    const [again] = await eventually(async () => ((await listening()).length === 1 ? listening() : undefined));
    expect(again!.pid).not.toBe(listener!.pid);
  });
});

describe("loading the driver", () => {
  it("the local tracker never loads pg; the shared one loads it when opened", async () => {
    const script = `
      const library = require(${JSON.stringify(path.resolve(__dirname, "../../dist/index.cjs"))});
      const loaded = () => Object.keys(require.cache).some((file) => file.includes("/node_modules/pg/"));
      const tracker = library.openTracker({ stateDir: process.argv[1] });
      tracker.create({ workspace: "w", state: "queued" });
      const claim = tracker.claimNext();
      tracker.complete(claim.request.requestId, claim.token, { output: "ok" });
      tracker.close();
      const local = loaded();
      library.openSharedTracker("postgresql://nobody@127.0.0.1:1/none").catch(() => console.log(JSON.stringify({ local, shared: loaded() })));`;
    const child = spawn(process.execPath, ["-e", script, path.join(fs.mkdtempSync(path.join(tempParent(), "local-")), "state")], {
      stdio: ["ignore", "pipe", "pipe"],
      env: childEnv(),
    });
    expect(JSON.parse(await firstLine(child))).toEqual({ local: false, shared: true });
  });
});

describe("claims on the shared store", () => {
  it("a claim without a heartbeat past the timeout, counted from its last beat, is taken back by the next claim; the old token's result is dropped", async () => {
    const url = await cluster().newDatabase();
    const clock = aClock();
    const tracker = await aSharedTracker(url, { now: clock.now, heartbeatTimeoutMs: 60_000, host: "host-a" });
    await tracker.create({ requestId: "r1", workspace: "w", state: "queued" });
    const first = (await tracker.claimNext({ worker: "worker-1" }))!;
    clock.advance(59_000);
    expect(await tracker.heartbeat("r1", first.token)).toBe(true);
    // Silent for 59 s since the beat, 118 s since the claim: kept.
    clock.advance(59_000);
    expect(await tracker.claimNext()).toBeNull();
    clock.advance(2000);
    const second = (await tracker.claimNext({ worker: "worker-2" }))!;
    expect(second.request).toMatchObject({ requestId: "r1", attempt: 2 });
    const history = (await tracker.get("r1"))!.transitions!;
    expect(history.at(-2)).toMatchObject({
      from: "processing",
      to: "queued",
      by: "monitor",
      token: first.token,
      reason: "released: no heartbeat for 1m 1s from worker-1 on host-a (attempt 1 of 3)",
    });
    expect((await tracker.complete("r1", first.token, { output: "late" })).outcome).toBe("dropped");
    expect(await tracker.heartbeat("r1", first.token)).toBe(false);
    const claims = await sqlOn<{ token: string; ended_state: string | null }>(url, "SELECT token, ended_state FROM claims ORDER BY claimed_at, attempt");
    expect(claims).toEqual([
      { token: first.token, ended_state: "queued" },
      { token: second.token, ended_state: null },
    ]);
  });

  it("a result recorded before the worker died is applied when its claim is taken back, not run again", async () => {
    const url = await cluster().newDatabase();
    const clock = aClock();
    const tracker = await aSharedTracker(url, { now: clock.now, heartbeatTimeoutMs: 1000 });
    await tracker.create({ requestId: "r1", workspace: "w", state: "queued" });
    const claim = (await tracker.claimNext())!;
    await tracker.recordResult("r1", claim.token, { outcome: "completed", fields: { output: "finished before the crash" } });
    clock.advance(1001);
    expect(await tracker.takeBackStaleClaims()).toEqual(["r1"]);
    expect(await tracker.get("r1")).toMatchObject({ state: "completed", output: "finished before the crash", attempt: 1 });
    expect(await tracker.claimNext()).toBeNull();
  });

  it("four worker processes on two hosts drain one queue, each request claimed and completed exactly once", async () => {
    const url = await cluster().newDatabase();
    const tracker = await aSharedTracker(url);
    const count = 400;
    for (let i = 0; i < count; i++) await tracker.create({ requestId: `job-${i}`, workspace: "drain", state: "queued" });
    const workers = ["host-a", "host-a", "host-b", "host-b"].map((host) => aWorkerOn(host, url, "drain"));
    const outputs = workers.map((worker) => linesOf(worker));
    await Promise.all(workers.map((worker) => waitForLine(worker, "ready")));
    for (const worker of workers) worker.stdin!.write("go\n");
    expect(await Promise.all(workers.map(waitForExit))).toEqual([0, 0, 0, 0]);
    const done = (await Promise.all(outputs)).map((lines) => JSON.parse(lines.at(-1)!) as { host: string; completed: string[] });
    const all = done.flatMap((worker) => worker.completed);
    expect(all).toHaveLength(count);
    expect(new Set(all).size).toBe(count);
    const twice = await sqlOn(url, "SELECT request_id FROM transitions WHERE to_state = 'processing' GROUP BY request_id HAVING count(*) > 1");
    expect(twice).toEqual([]);
    // Each claim names the host of the worker that completed it.
    const claims = await sqlOn<{ request_id: string; host: string }>(url, "SELECT request_id, host FROM claims");
    const hostOf = new Map(done.flatMap((worker) => worker.completed.map((id) => [id, worker.host] as const)));
    expect(claims.filter((claim) => hostOf.get(claim.request_id) !== claim.host)).toEqual([]);
    expect((await tracker.list({ states: ["completed"], limit: 1000 })).items).toHaveLength(count);
  }, 120_000);

  it("a SIGKILLed worker's claim is taken back after the heartbeat timeout, and another host completes the request", async () => {
    const url = await cluster().newDatabase();
    const tracker = await aSharedTracker(url, { heartbeatTimeoutMs: 300 });
    await tracker.create({ requestId: "victim", workspace: "w", state: "queued" });
    const monitor = tracker.startMonitor({ intervalMs: 50 });
    const hanging = aWorkerOn("host-a", url, "hang");
    const claimed = JSON.parse(await firstLine(hanging)) as { requestId: string; token: string };
    hanging.kill("SIGKILL");
    await waitForExit(hanging);

    await eventually(async () => ((await tracker.get("victim"))?.state === "queued" ? true : undefined));
    expect((await tracker.get("victim"))?.transitions?.at(-1)).toMatchObject({
      by: "monitor",
      token: claimed.token,
      reason: expect.stringMatching(/^released: no heartbeat for .* on host-a \(attempt 1 of 3\)$/),
    });
    monitor.stop();

    const finished = tracker.waitForResult("victim", { timeoutMs: 60_000 });
    const drain = aWorkerOn("host-b", url, "drain");
    drain.stdin!.write("go\n");
    expect(await waitForExit(drain)).toBe(0);
    expect(await finished).toMatchObject({ state: "completed", output: "done on host-b", attempt: 2 });
    const late = await tracker.complete("victim", claimed.token, { output: "from beyond" });
    expect(late.outcome).toBe("dropped");
    expect((await tracker.get("victim"))?.output).toBe("done on host-b");
  }, 60_000);
});
