import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { aRecording, aTracker, tempStateDir } from "../helpers/stateDir";

function seed(count: number) {
  const recording = aRecording();
  for (let i = 0; i < count; i++) recording.tracker.create({ requestId: `r${i}`, workspace: "gateway", state: "queued" });
  return { ...recording, stateDir: recording.reader.stateDir.root };
}

function removeIndex(stateDir: string): void {
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });
}

describe("losing the index while a tracker has it open", () => {
  it("a healthy index is left alone", () => {
    const { reader, upkeep } = seed(3);
    const generation = reader.generation();
    expect(upkeep.checkIndex()).toMatchObject({ problem: null, reopened: false });
    expect(reader.generation()).toBe(generation);
  });

  it("index.db deleted: noticed, rebuilt from the files under a new generation, and shared with other processes again", () => {
    const { tracker, stateDir, reader, upkeep } = seed(20);
    const generation = reader.generation();
    removeIndex(stateDir);
    // Another process opens the state directory meanwhile: it makes (and rebuilds) a new index.db.
    const other = aTracker({ stateDir });
    other.create({ requestId: "late", workspace: "gateway", state: "queued" });
    expect(tracker.get("late")).toBeNull(); // Still on the deleted file.

    expect(upkeep.checkIndex()).toMatchObject({ problem: { kind: "replaced" }, reopened: true });
    expect(tracker.get("late")?.state).toBe("queued");
    expect(reader.countsByState().queued).toBe(21);
    expect(reader.generation()).not.toBe(generation);
    // One index again: a write by either is seen by the other.
    tracker.transition("late", "processing");
    expect(other.get("late")?.state).toBe("processing");
    expect(upkeep.checkIndex().problem).toBeNull();
  });

  it("index.db deleted with nobody else around: rebuilt by the tracker itself", () => {
    const { stateDir, reader, upkeep } = seed(5);
    removeIndex(stateDir);
    expect(upkeep.checkIndex()).toMatchObject({ problem: { kind: "deleted" }, reopened: true });
    expect(fs.existsSync(path.join(stateDir, "index.db"))).toBe(true);
    expect(reader.countsByState().queued).toBe(5);
  });

  it("index.db overwritten with garbage: noticed, replaced by a rebuilt one; the request files are untouched", () => {
    const { tracker, stateDir, reader, upkeep } = seed(10);
    const files = fs.readdirSync(path.join(stateDir, "requests")).map((name) => fs.readFileSync(path.join(stateDir, "requests", name), "utf8"));
    const fd = fs.openSync(path.join(stateDir, "index.db"), "r+");
    fs.writeSync(fd, Buffer.alloc(64 * 1024, 0xab), 0, 64 * 1024, 0);
    fs.closeSync(fd);
    const check = upkeep.checkIndex();
    expect(check).toMatchObject({ problem: { kind: "corrupt" }, reopened: true });
    expect(reader.countsByState().queued).toBe(10);
    expect(fs.readdirSync(path.join(stateDir, "requests")).map((name) => fs.readFileSync(path.join(stateDir, "requests", name), "utf8"))).toEqual(files);
    tracker.create({ requestId: "after", workspace: "gateway", state: "queued" });
    expect(tracker.get("after")).not.toBeNull();
  });

  it("index.db deleted, then a write: the write reopens (rebuilds) the index before it writes, and the guard's next check reports it", () => {
    const { tracker, stateDir, reader, upkeep } = seed(5);
    const generation = reader.generation();
    removeIndex(stateDir);
    tracker.create({ requestId: "after", workspace: "gateway", state: "queued" });
    // The write went to the new index.db, which holds the files written before it too.
    const other = aRecording({ stateDir, recover: false }).reader;
    expect(other.get("after")?.state).toBe("queued");
    expect(other.countsByState().queued).toBe(6);
    expect(reader.generation()).not.toBe(generation);
    expect(upkeep.checkIndex()).toMatchObject({ problem: { kind: "deleted" }, reopened: true });
    expect(upkeep.checkIndex()).toMatchObject({ problem: null, reopened: false });
  });

  it("the state directory removed: reported and left alone until it is back; then the index is rebuilt from what is there", () => {
    const { tracker, stateDir, upkeep } = seed(5);
    fs.rmSync(stateDir, { recursive: true, force: true });
    for (let i = 0; i < 2; i++) expect(upkeep.checkIndex()).toMatchObject({ problem: { kind: "dir-missing" }, reopened: false });
    expect(fs.existsSync(stateDir)).toBe(false);
    // A writer (or a person) recreates it with one request.
    writeRequestFile(stateDir, aRequest({ requestId: "reborn", state: "queued" }));
    expect(upkeep.checkIndex()).toMatchObject({ problem: { kind: "deleted" }, reopened: true });
    expect(tracker.list().items.map((r) => r.requestId)).toEqual(["reborn"]);
    // Writes work again: the layout was made.
    tracker.create({ requestId: "next", workspace: "gateway", state: "queued" });
    expect(fs.existsSync(path.join(stateDir, "requests/next.json"))).toBe(true);
  });

  it("the guard loop reports a missing directory and counts the rebuilds", async () => {
    const { stateDir, upkeep } = seed(2);
    const causes: string[] = [];
    const guard = upkeep.startIndexGuard({ intervalMs: 20, onReopened: (cause) => causes.push(cause) });
    fs.rmSync(stateDir, { recursive: true, force: true });
    await expect.poll(() => guard.status().problem).toMatch(/is missing; waiting for it to be created again/);
    fs.mkdirSync(stateDir);
    await expect.poll(() => guard.status().rebuilds).toBe(1);
    expect(guard.status()).toMatchObject({ problem: null, lastRebuild: { cause: "index.db was deleted" } });
    expect(causes).toEqual(["index.db was deleted"]);
    guard.stop();
  });
});

describe("reqwatch monitor when the index is lost", () => {
  it("reopens the index rebuilt from the files and goes on flagging what is stuck in it", async () => {
    const stateDir = tempStateDir();
    const monitor = spawn(process.execPath, [path.resolve(__dirname, "../../bin/reqwatch.js"), "monitor", "--interval", "200ms", "--json"], {
      env: { ...process.env, REQWATCH_STATE_DIR: stateDir },
    });
    let stdout = "";
    let stderr = "";
    monitor.stdout.on("data", (chunk) => (stdout += chunk));
    monitor.stderr.on("data", (chunk) => (stderr += chunk));
    // Passes only: the retention's runs are lines of their own (`{"retention": ...}`).
    const passes = () =>
      stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { stuck?: { requestId: string }[] })
        .filter((line): line is { stuck: { requestId: string }[] } => line.stuck !== undefined);
    try {
      await expect.poll(() => passes().length, { timeout: 10_000 }).toBeGreaterThan(0);
      removeIndex(stateDir);
      // Written after the index was lost: the monitor follows the folder, and its guard reopens the index rebuilt from the files.
      const hourAgo = Date.now() - 3_600_000;
      writeRequestFile(stateDir, aRequest({ requestId: "left-waiting", state: "queued", createdAt: hourAgo, lastUpdatedAt: hourAgo, queuedAt: hourAgo }));
      await expect
        .poll(
          () =>
            passes()
              .at(-1)
              ?.stuck.map((stuck) => stuck.requestId),
          { timeout: 10_000 },
        )
        .toEqual(["left-waiting"]);
      await expect.poll(() => stderr, { timeout: 10_000 }).toContain("index.db was deleted; the index was reopened from the files.");
      await expect
        .poll(
          () =>
            passes()
              .at(-1)
              ?.stuck.map((stuck) => stuck.requestId),
          { timeout: 10_000 },
        )
        .toEqual(["left-waiting"]);
      expect(fs.existsSync(path.join(stateDir, "index.db"))).toBe(true);
    } finally {
      monitor.kill("SIGTERM");
      await new Promise((resolve) => monitor.once("exit", resolve));
    }
  });
});
