import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, runCli } from "../helpers/cli";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { waitForExit } from "../helpers/processes";
import { newestIds, writeRequests } from "../helpers/requestFiles";
import { requestPath, tempStateDir } from "../helpers/stateDir";
import { stateDirAt } from "../../lib/stateFiles/stateDir";
import { liveFollower, syncWithFollower } from "../../lib/ingest/followerSync";

/** A folder big enough that reading commands leave the index to a follower (BACKGROUND_FROM_FILES). */
const BIG = 2000;
const noFollower = { REQWATCH_FOLLOW: "0" } as Partial<NodeJS.ProcessEnv> as NodeJS.ProcessEnv;

const followers: number[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill("SIGTERM");
    await waitForExit(child);
  }
  for (const pid of followers.splice(0)) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // Ended already.
    }
  }
});

/** A big folder with its index built and `reqwatch follow` (a child of the test) vouching for it. */
async function aFollowedBigFolder(): Promise<string> {
  const stateDir = tempStateDir();
  writeRequests(stateDir, BIG);
  expect(runCli(["list", "--limit", "1"], { stateDir, env: noFollower }).code).toBe(0);
  const child = spawn(process.execPath, [BIN, "follow", "--state-dir", stateDir], { stdio: "ignore" });
  children.push(child);
  await expect.poll(() => liveFollower(stateDirAt(stateDir))?.pid, { timeout: 20_000 }).toBe(child.pid);
  await expect.poll(() => syncWithFollower(stateDirAt(stateDir)), { timeout: 20_000 }).toBe(true);
  return stateDir;
}

/** Another program's change, made by a process of its own. */
function foreign(script: string, ...args: string[]): void {
  const result = spawnSync(process.execPath, ["-e", script, ...args], { encoding: "utf8" });
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
}

/** The first column of each row `sql` reads from the folder's index, opened read only and closed again. */
function fromIndex(stateDir: string, sql: string): unknown[] {
  const index = new Database(path.join(stateDir, "index.db"), { readonly: true });
  try {
    return index.prepare(sql).pluck().all();
  } finally {
    index.close();
  }
}

const listIds = (stateDir: string, extra: string[] = []) =>
  (
    JSON.parse(runCli(["list", "--json", "--limit", "500", ...extra], { stateDir, env: noFollower }).stdout) as {
      items: { requestId: string; state: string }[];
    }
  ).items;

describe("a big folder", () => {
  it("get on a new folder reads its one file, and leaves the rest of the index to a follower", () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, BIG);
    const result = runCli(["get", "r00010"], { stateDir, env: noFollower });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(JSON.parse(fs.readFileSync(requestPath(stateDir, "r00010"), "utf8")));
    expect(fromIndex(stateDir, "SELECT id FROM requests")).toEqual(["r00010"]);
    // The next command that needs every file reads them all (no follower builds the index here).
    expect(listIds(stateDir, ["--limit", "3"]).map((row) => row.requestId)).toEqual(newestIds(stateDir, 3));
  });

  it("list on a new folder reads the newest files until its page cannot change, and leaves the rest unread", () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, BIG);
    const first = JSON.parse(runCli(["list", "--json", "--limit", "5"], { stateDir, env: noFollower }).stdout) as { items: { requestId: string }[] };
    expect(first.items.map((row) => row.requestId)).toEqual(newestIds(stateDir, 5));
    expect(fromIndex(stateDir, "SELECT count(*) FROM requests")[0] as number).toBeLessThan(BIG);
    expect(fromIndex(stateDir, "SELECT value FROM meta WHERE key = 'reconciled_at'")[0]).toBeUndefined();
    // Oldest first needs every file: the index is completed then.
    const oldest = JSON.parse(runCli(["list", "--json", "--limit", "2", "--order", "asc"], { stateDir, env: noFollower }).stdout) as {
      items: { requestId: string }[];
    };
    expect(oldest.items.map((row) => row.requestId)).toEqual(["r00000", "r00001"]);
    expect(runCli(["queues"], { stateDir, env: noFollower }).code).toBe(0);
  });

  it("list on a copied folder, whose modification times say nothing, still reads only the newest files its page needs", () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, BIG);
    // Copied in the directory's order, newest content last: the oldest request has the newest modification time.
    const dir = path.join(stateDir, "requests");
    const copiedAt = Date.now();
    fs.readdirSync(dir)
      .sort()
      .forEach((name, i) => fs.utimesSync(path.join(dir, name), new Date(copiedAt - i * 1000), new Date(copiedAt - i * 1000)));
    const first = JSON.parse(runCli(["list", "--json", "--limit", "5"], { stateDir, env: noFollower }).stdout) as { items: { requestId: string }[] };
    expect(first.items.map((row) => row.requestId)).toEqual(newestIds(stateDir, 5));
    expect(fromIndex(stateDir, "SELECT count(*) FROM requests")[0] as number).toBeLessThan(BIG);
    expect(fromIndex(stateDir, "SELECT value FROM meta WHERE key = 'reconciled_at'")[0]).toBeUndefined();
  });

  it("the next list answers from the rows the first one indexed, reading only the files changed since", () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, BIG);
    const page = () =>
      (JSON.parse(runCli(["list", "--json", "--limit", "5"], { stateDir, env: noFollower }).stdout) as { items: { requestId: string }[] }).items.map(
        (row) => row.requestId,
      );
    const newest = newestIds(stateDir, 5);
    expect(page()).toEqual(newest);
    // An old file damaged with its modification time kept: a command that read it would record it as unreadable.
    const damaged = requestPath(stateDir, "r00003");
    const { mtime } = fs.statSync(damaged);
    fs.writeFileSync(damaged, "{ not json");
    fs.utimesSync(damaged, mtime, mtime);
    // Another program's update to an old request since: the next page shows it.
    const updated = requestPath(stateDir, "r00004");
    fs.writeFileSync(updated, JSON.stringify({ ...JSON.parse(fs.readFileSync(updated, "utf8")), lastUpdatedAt: Date.now(), prompt: "updated" }));
    const unreadable = () => fromIndex(stateDir, "SELECT file FROM unreadable_files");
    expect(page()).toEqual(["r00004", ...newest.slice(0, 4)]);
    expect(unreadable()).toEqual([]);
    // A command that needs every file reads it, and says so.
    expect(runCli(["queues"], { stateDir, env: noFollower }).code).toBe(0);
    expect(unreadable()).toEqual(["requests/r00003.json"]);
  });

  it("a reading command starts a follower on a big folder, none on a small one or with REQWATCH_FOLLOW=0", async () => {
    const small = tempStateDir();
    writeRequests(small, 10);
    expect(runCli(["list"], { stateDir: small }).code).toBe(0);
    expect(fs.existsSync(path.join(small, "follower"))).toBe(false);

    const big = tempStateDir();
    writeRequests(big, BIG);
    expect(runCli(["list", "--limit", "1"], { stateDir: big, env: noFollower }).code).toBe(0);
    expect(liveFollower(stateDirAt(big))).toBeNull();
    expect(runCli(["list", "--limit", "1"], { stateDir: big }).code).toBe(0);
    await expect.poll(() => liveFollower(stateDirAt(big)), { timeout: 20_000 }).not.toBeNull();
    const pid = liveFollower(stateDirAt(big))!.pid;
    followers.push(pid);
    // It answers a command's question: the index holds every change so far.
    await expect.poll(() => syncWithFollower(stateDirAt(big)), { timeout: 20_000 }).toBe(true);
    // One follower a folder: the next command starts no second one.
    expect(runCli(["list", "--limit", "1"], { stateDir: big }).code).toBe(0);
    expect(liveFollower(stateDirAt(big))?.pid).toBe(pid);
  });

  it("a follower answers a command only once what its watcher had seen before the question is in the index", async () => {
    const stateDir = await aFollowedBigFolder();
    const index = new Database(path.join(stateDir, "index.db"), { readonly: true });
    try {
      const indexed = index.prepare("SELECT state FROM requests WHERE id = ?").pluck();
      for (let i = 0; i < 20; i++) {
        // Asked at once after the change: the follower's watcher has the change queued, not yet ingested.
        const id = `burst-${i}`;
        const temp = path.join(stateDir, "requests", `.${id}.tmp`);
        fs.writeFileSync(temp, JSON.stringify(aRequest({ requestId: id, state: "queued" })));
        fs.renameSync(temp, requestPath(stateDir, id));
        expect(syncWithFollower(stateDirAt(stateDir))).toBe(true);
        expect(indexed.get(id)).toBe("queued");
      }
    } finally {
      index.close();
    }
  });

  it("with no follower, a command is not told the index is current", () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, 10);
    expect(syncWithFollower(stateDirAt(stateDir))).toBe(false);
  });

  it("the next command shows each change another program made while a follower vouched for the index", async () => {
    const stateDir = await aFollowedBigFolder();
    const newest = Date.now() + 60_000;
    const file = (id: string) => requestPath(stateDir, id);

    // Added.
    writeRequestFile(path.join(stateDir, "..", "outside"), aRequest({ requestId: "added", workspace: "other", lastUpdatedAt: newest }));
    foreign("require('fs').renameSync(process.argv[1], process.argv[2])", path.join(stateDir, "..", "outside", "requests", "added.json"), file("added"));
    expect(listIds(stateDir, ["--limit", "1"])).toEqual([expect.objectContaining({ requestId: "added" })]);

    // Removed.
    foreign("require('fs').rmSync(process.argv[1])", file("added"));
    expect(listIds(stateDir).map((row) => row.requestId)).not.toContain("added");

    // Replaced by a rename over it (a temp file, then mv), as `jq ... > tmp && mv tmp file` does.
    const replaced = { ...JSON.parse(fs.readFileSync(file("r00001"), "utf8")), state: "failed", lastUpdatedAt: newest + 1, version: 99 };
    foreign(
      "const fs = require('fs'); fs.writeFileSync(process.argv[1] + '.tmp', process.argv[2]); fs.renameSync(process.argv[1] + '.tmp', process.argv[1])",
      file("r00001"),
      JSON.stringify(replaced),
    );
    expect(listIds(stateDir, ["--limit", "1"])).toEqual([expect.objectContaining({ requestId: "r00001", state: "failed" })]);

    // Edited in place (the same inode, truncated and written).
    const edited = { ...JSON.parse(fs.readFileSync(file("r00002"), "utf8")), state: "completed", lastUpdatedAt: newest + 2, version: 100 };
    const inode = fs.statSync(file("r00002")).ino;
    foreign("require('fs').writeFileSync(process.argv[1], process.argv[2])", file("r00002"), JSON.stringify(edited));
    expect(fs.statSync(file("r00002")).ino).toBe(inode);
    expect(listIds(stateDir, ["--limit", "1"])).toEqual([expect.objectContaining({ requestId: "r00002", state: "completed" })]);
    expect(JSON.parse(runCli(["get", "r00002"], { stateDir, env: noFollower }).stdout)).toMatchObject({ state: "completed", version: 100 });

    // The index deleted, and a file added meanwhile: the next command shows the folder as it is.
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });
    writeRequestFile(path.join(stateDir, "..", "outside"), aRequest({ requestId: "after-loss", workspace: "other", lastUpdatedAt: newest + 3 }));
    foreign(
      "require('fs').renameSync(process.argv[1], process.argv[2])",
      path.join(stateDir, "..", "outside", "requests", "after-loss.json"),
      file("after-loss"),
    );
    const rows = listIds(stateDir, ["--limit", "3"]);
    expect(rows.map((row) => row.requestId)).toEqual(["after-loss", "r00002", "r00001"]);
  });
});
