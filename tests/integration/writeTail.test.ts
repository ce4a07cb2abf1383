import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { OWN_TEMP_PATTERN } from "../../lib/fs/durableWrite";
import { aRecording } from "../helpers/stateDir";

/** A turn of the event loop: the callbacks a write queued with setImmediate run before this one's. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => vi.useRealTimers());

describe("the write tail: what a write no longer pays for", () => {
  it("the index's checkpoint runs from a timer, not inside a write's commit", () => {
    // The checkpoint's timer is moved by hand: its next tick, not a wait, comes between the writes and the check.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const { tracker, reader } = aRecording();
    const wal = path.join(reader.stateDir.storeDir, "index.db-wal");
    for (let i = 0; i < 300; i++) tracker.create({ requestId: `c${i}`, workspace: "w", state: "queued" });
    for (let i = 0; i < 300; i++) tracker.transition(`c${i}`, "processing");
    // Written without a turn of the event loop: no commit checkpointed (SQLite's default would have, every 1,000 pages: about 4 MB).
    expect(fs.statSync(wal).size).toBeGreaterThan(8 * 1024 * 1024);
    // The timer's tick has checkpointed every frame: the next write starts the log over.
    vi.runOnlyPendingTimers();
    tracker.transition("c0", "completed");
    const index = new Database(path.join(reader.stateDir.storeDir, "index.db"));
    const [result] = index.pragma("wal_checkpoint(PASSIVE)") as { log: number }[];
    index.close();
    expect(result!.log).toBeLessThan(100);
  });

  it("creates that found no spare inode have the pool topped up on the next turn (not after a single one), and the next create rewrites one", async () => {
    const { tracker, reader } = aRecording();
    const dir = reader.stateDir.requestsDir;
    const spares = () => fs.readdirSync(dir).filter((name) => OWN_TEMP_PATTERN.test(name));
    tracker.create({ requestId: "first", workspace: "w", state: "queued" });
    await turn();
    // One create (a script's, a hook's) leaves nothing behind.
    expect(spares()).toEqual([]);
    tracker.create({ requestId: "again", workspace: "w", state: "queued" });
    await turn();
    const kept = spares();
    expect(kept).toHaveLength(4);
    const inodes = new Set(kept.map((name) => fs.statSync(path.join(dir, name)).ino));
    tracker.create({ requestId: "second", workspace: "w", state: "queued", prompt: "hello" });
    expect(inodes.has(fs.statSync(path.join(dir, "second.json")).ino)).toBe(true);
    expect(tracker.get("second")?.prompt).toBe("hello");
    // Closing removes them.
    tracker.close();
    expect(spares()).toEqual([]);
  });
});
