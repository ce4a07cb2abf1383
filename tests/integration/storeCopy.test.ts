import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { RequestRecord } from "../../lib/model/requestFormat";
import { loadPg } from "../../lib/postgres/pgDriver";
import { BIN, runCli } from "../helpers/cli";
import { aSharedTracker, postgresForFile, sqlOn } from "../helpers/postgres";
import { childEnv, eventually, waitForExit } from "../helpers/processes";
import { aTracker, tempForeignDir, tempParent, tempStateDir } from "../helpers/stateDir";

const cluster = postgresForFile();

/** A new database over TCP with the cluster's password, and the same over the socket for the test's own queries. */
async function aDatabase(): Promise<{ url: string; socketUrl: string }> {
  const socketUrl = await cluster().newDatabase();
  return { socketUrl, url: cluster().tcpUrl(new URL(socketUrl).pathname.slice(1), cluster().password) };
}

/**
 * A state folder of `count` requests in each state a queue leaves them: created, queued, completed,
 * failed and held by a worker (processing, its claim live), each with its history.
 */
function aFolderOf(count: number): string {
  const stateDir = tempStateDir();
  const tracker = aTracker({ stateDir });
  for (let i = 0; i < count; i++) {
    const kind = i % 5;
    const requestId = `req-${String(i).padStart(4, "0")}`;
    tracker.create({ requestId, workspace: `w${kind}`, prompt: `question ${i}`, model: "m-1", state: kind === 0 ? "created" : "queued" });
    if (kind < 2) continue;
    const claim = tracker.claimNext({ workspace: `w${kind}`, worker: "builder" })!;
    if (kind === 2) tracker.complete(requestId, claim.token, { output: `answer ${i}`, tokens: i });
    if (kind === 3) tracker.fail(requestId, claim.token, `cannot answer ${i}`, { retryable: false });
  }
  tracker.close();
  return stateDir;
}

/** Every request file of a folder, parsed: what a copy must carry whole. */
function requestsIn(stateDir: string): Map<string, RequestRecord> {
  const dir = path.join(stateDir, "requests");
  const names = fs.readdirSync(dir).filter((name) => name.endsWith(".json"));
  return new Map(names.map((name) => [name.slice(0, -5), JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")) as RequestRecord]));
}

/** Every file under a folder with its bytes: a source must be the same after a copy. */
function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      files[path.relative(folder, path.join(entry.parentPath, entry.name))] = fs.readFileSync(path.join(entry.parentPath, entry.name), "base64");
  }
  return files;
}

async function expectStoreHolds(url: string, source: Map<string, RequestRecord>): Promise<void> {
  const tracker = await aSharedTracker(url);
  for (const [requestId, record] of source) expect(await tracker.get(requestId), requestId).toEqual(record);
  const counted = await sqlOn<{ requests: number }>(url, "SELECT count(*)::int AS requests FROM requests");
  expect(counted[0]!.requests).toBe(source.size);
  // Nothing doubled: each history step once, in the feed as in the record.
  const steps = await sqlOn<{ request_id: string; steps: number }>(url, "SELECT request_id, count(*)::int AS steps FROM transitions GROUP BY request_id");
  expect(Object.fromEntries(steps.map((row) => [row.request_id, row.steps]))).toEqual(
    Object.fromEntries([...source].map(([requestId, record]) => [requestId, record.transitions!.length])),
  );
  const live = await sqlOn<{ request_id: string }>(url, "SELECT request_id FROM claims WHERE ended_at IS NULL ORDER BY request_id");
  expect(live.map((row) => row.request_id)).toEqual(
    [...source.values()]
      .filter((record) => record.state === "processing")
      .map((record) => record.requestId)
      .sort(),
  );
}

describe("reqwatch store copy", () => {
  it("copies a folder of 300 requests into the shared store request by request, leaves the folder as it was, and back into a new folder equal to the original", async () => {
    const { url, socketUrl } = await aDatabase();
    const stateDir = aFolderOf(300);
    const before = snapshot(stateDir);
    const source = requestsIn(stateDir);

    const copied = runCli(["store", "copy", "--from", stateDir, "--to", url, "--batch-size", "64"]);
    expect(copied.code, copied.stderr).toBe(0);
    const shown = url.replace(encodeURIComponent(cluster().password), "***");
    expect(copied.stdout).toBe(`Copied 300 of 300 request(s) from ${stateDir} to ${shown}; 0 were there already.\n`);
    expect(copied.stderr).toContain("reqwatch: batch 5: 300 copied, 0 already there\n");
    expect(copied.stdout + copied.stderr).not.toContain(cluster().password);
    expect(snapshot(stateDir)).toEqual(before);
    await expectStoreHolds(socketUrl, source);

    const back = path.join(tempParent(), "copied-back");
    const copiedBack = runCli(["store", "copy", "--from", url, "--to", back]);
    expect(copiedBack.code, copiedBack.stderr).toBe(0);
    expect(copiedBack.stdout).toBe(`Copied 300 of 300 request(s) from ${shown} to ${back}; 0 were there already.\n`);
    expect(requestsIn(back)).toEqual(source);
    // The new folder is reqwatch's: the CLI reads it as it reads the original.
    const got = runCli(["get", "req-0004"], { stateDir: back });
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual(source.get("req-0004"));
    // Run again: everything is there already, nothing rewritten.
    const again = runCli(["store", "copy", "--from", url, "--to", back]);
    expect(again.stdout).toBe(`Copied 0 of 300 request(s) from ${shown} to ${back}; 300 were there already.\n`);
  }, 180_000);

  it("a copy killed after its first batch is in the database, run again, gives the same result with nothing doubled", async () => {
    const { url, socketUrl } = await aDatabase();
    const stateDir = aFolderOf(200);
    const source = requestsIn(stateDir);
    const ids = [...source.keys()].sort();
    // The schema first, so that the test can hold the second batch's first row.
    await aSharedTracker(socketUrl);
    const { Client } = await loadPg();
    const blocker = new Client({ connectionString: socketUrl });
    await blocker.connect();
    try {
      // The second batch's first insert waits on this uncommitted row: the copy is caught between its batches.
      await blocker.query("BEGIN");
      await blocker.query(
        "INSERT INTO requests (request_id, workspace, state, created_at, last_updated_at, state_since, version, record) VALUES ($1, 'w', 'created', 0, 0, 0, 0, '{}')",
        [ids[50]],
      );
      const copy = spawn(process.execPath, [BIN, "store", "copy", "--from", stateDir, "--to", url, "--batch-size", "50"], {
        stdio: ["ignore", "pipe", "pipe"],
        env: childEnv(),
      });
      await eventually(async () => {
        const counted = await sqlOn<{ count: number }>(socketUrl, "SELECT count(*)::int AS count FROM requests");
        return counted[0]!.count === 50 ? true : undefined;
      }, 60_000);
      copy.kill("SIGKILL");
      await waitForExit(copy);
      await blocker.query("ROLLBACK");
    } finally {
      await blocker.end();
    }
    const counted = await sqlOn<{ count: number }>(socketUrl, "SELECT count(*)::int AS count FROM requests");
    expect(counted[0]!.count).toBe(50);

    const rerun = runCli(["store", "copy", "--from", stateDir, "--to", url, "--batch-size", "50"]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toMatch(/^Copied 150 of 200 request\(s\) from .*; 50 were there already\.\n$/);
    await expectStoreHolds(socketUrl, source);
  }, 180_000);

  it("refuses two folders, a destination folder reqwatch does not manage, and a database that holds no store; names what it leaves, writing nothing to the source", async () => {
    const { url, socketUrl } = await aDatabase();
    const stateDir = aFolderOf(5);
    const bothFolders = runCli(["store", "copy", "--from", stateDir, "--to", tempStateDir()]);
    expect(bothFolders).toMatchObject({
      code: 2,
      stderr: "reqwatch: error: store copy takes a state folder and a postgres:// URL: one as --from, the other as --to.\n",
    });

    const fromEmpty = runCli(["store", "copy", "--from", url, "--to", path.join(tempParent(), "new")]);
    expect(fromEmpty.code).toBe(1);
    expect(fromEmpty.stderr).toMatch(/^reqwatch: The database at postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+ holds no reqwatch shared store\.\n$/);
    const tables = await sqlOn(socketUrl, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    expect(tables).toEqual([]);

    expect(runCli(["store", "copy", "--from", stateDir, "--to", url]).code).toBe(0);
    // Changed in the folder since, and a file no one can read: named, not copied, the rest skipped as there already.
    const tracker = aTracker({ stateDir });
    tracker.update("req-0001", { fields: { model: "m-2" } });
    tracker.close();
    fs.writeFileSync(path.join(stateDir, "requests", "req-bad.json"), "{ not json");
    const before = snapshot(stateDir);
    const again = runCli(["store", "copy", "--from", stateDir, "--to", url]);
    expect(again.code).toBe(1);
    expect(again.stdout.split("\n").slice(1)).toEqual([
      "  not copied req-0001: the store holds version 1, the source version 2: left as it is",
      expect.stringMatching(/^ {2}unreadable req-bad: invalid JSON/),
      "",
    ]);
    expect(again.stdout).toMatch(/^Copied 0 of 6 request\(s\) from .*; 4 were there already\.\n/);
    expect(again.stderr).toContain("reqwatch: 2 of 6 request(s) were not copied (the lines above say why).\n");
    expect(snapshot(stateDir)).toEqual(before);
    const kept = await sqlOn<{ record: RequestRecord }>(socketUrl, "SELECT record FROM requests WHERE request_id = 'req-0001'");
    expect(kept[0]!.record.model).toBe("m-1");

    const foreign = tempForeignDir();
    fs.writeFileSync(path.join(foreign, "notes.txt"), "someone else's\n");
    const intoForeign = runCli(["store", "copy", "--from", url, "--to", foreign]);
    expect(intoForeign.code).toBe(1);
    expect(intoForeign.stderr).toContain("Copy into a new or empty folder, or one reqwatch manages.");
    expect(fs.readdirSync(foreign)).toEqual(["notes.txt"]);
  }, 120_000);
});
