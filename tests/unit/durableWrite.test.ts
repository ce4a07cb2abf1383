import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { discardSpares, keepReplaced, writeFileDurable, writeTempFile } from "../../lib/fs/durableWrite";
import { openIndex } from "../../lib/db/openIndex";
import { withWritersLock } from "../../lib/db/writeLock";
import { aRecording, tempStateDir } from "../helpers/stateDir";

const temps = (dir: string) => fs.readdirSync(dir).filter((name) => name.endsWith(".tmp"));

afterEach(() => discardSpares());

describe("durable writes reuse the inodes they replace", () => {
  it("keeps the replaced version as a spare and writes the next version into it", () => {
    const dir = tempStateDir();
    const file = path.join(dir, "a.json");
    writeFileDurable(file, "first version, the longest of them all\n");
    const firstInode = fs.statSync(file).ino;
    writeFileDurable(file, "second\n");
    // The first version's inode is now this process's spare, its only link.
    expect(temps(dir)).toHaveLength(1);
    expect(fs.statSync(path.join(dir, temps(dir)[0] ?? "")).ino).toBe(firstInode);
    writeFileDurable(file, "third\n");
    expect(fs.statSync(file).ino).toBe(firstInode);
    // Written in place and cut to length: nothing of the longer old content is left.
    expect(fs.readFileSync(file, "utf8")).toBe("third\n");
  });

  it("never writes into a spare that is still linked to a live file", () => {
    const dir = tempStateDir();
    const live = path.join(dir, "live.json");
    writeFileDurable(live, "the live content\n");
    // As after a rename that failed once the version was kept: the spare is a second link to it.
    expect(keepReplaced(live)).not.toBeNull();
    const temp = writeTempFile(path.join(dir, "other.json"), "something else\n");
    expect(fs.readFileSync(live, "utf8")).toBe("the live content\n");
    expect(temp.stat.ino).not.toBe(fs.statSync(live).ino);
    expect(fs.statSync(live).nlink).toBe(1); // the doubtful spare was removed, not reused
    fs.rmSync(temp.path);
  });

  it("creates a new temp when its spare was swept away", () => {
    const dir = tempStateDir();
    const file = path.join(dir, "a.json");
    writeFileDurable(file, "one\n");
    writeFileDurable(file, "two\n");
    for (const name of temps(dir)) fs.rmSync(path.join(dir, name));
    writeFileDurable(file, "three\n");
    expect(fs.readFileSync(file, "utf8")).toBe("three\n");
  });

  it("a tracker's spares are gone when it closes, and never show as requests", () => {
    const { tracker, reader } = aRecording();
    const dir = reader.stateDir.requestsDir;
    tracker.create({ requestId: "r1", workspace: "w", state: "queued" });
    tracker.transition("r1", "processing");
    tracker.transition("r1", "completed");
    expect(temps(dir).length).toBeGreaterThan(0);
    expect(tracker.list({}).items.map((request) => request.requestId)).toEqual(["r1"]);
    tracker.close();
    expect(fs.readdirSync(dir)).toEqual(["r1.json"]);
  });
});

describe("the writers' lock", () => {
  it("waits for a writer in another process, then runs, and leaves the busy timeout as it was", async () => {
    const dir = tempStateDir();
    const file = path.join(dir, "index.db");
    const { db } = openIndex(file);
    // Another process takes the lock, writes a row under it, and commits a while later.
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const D=require(${JSON.stringify(require.resolve("better-sqlite3"))});const d=new D(${JSON.stringify(file)});d.exec("BEGIN IMMEDIATE");d.exec("INSERT INTO meta (key, value) VALUES ('holder', 'h')");console.log("held");setTimeout(()=>{d.exec("COMMIT");},400)`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve) => holder.stdout.once("data", () => resolve()));
    // Ours ran after the holder committed (it sees the holder's row), however late this process got there.
    const result = withWritersLock(db, () => [
      db.prepare("SELECT value FROM meta WHERE key = 'holder'").pluck().get(),
      db.prepare("INSERT INTO meta (key, value) VALUES ('x', '1')").run().changes,
    ]);
    expect(result).toEqual(["h", 1]);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(10_000);
    await new Promise((resolve) => holder.once("exit", resolve));
    db.close();
    expect(new Database(file).prepare("SELECT value FROM meta WHERE key = 'x'").pluck().get()).toBe("1");
  });

  it("rolls back when the function throws, and runs nested calls in the caller's transaction", () => {
    const { db } = openIndex(path.join(tempStateDir(), "index.db"));
    expect(() =>
      withWritersLock(db, () => {
        db.prepare("INSERT INTO meta (key, value) VALUES ('y', '1')").run();
        throw new Error("no");
      }),
    ).toThrow("no");
    expect(db.inTransaction).toBe(false);
    withWritersLock(db, () => withWritersLock(db, () => db.prepare("INSERT INTO meta (key, value) VALUES ('z', '1')").run()));
    expect(db.prepare("SELECT key FROM meta WHERE key IN ('y', 'z')").pluck().all()).toEqual(["z"]);
    db.close();
  });
});
