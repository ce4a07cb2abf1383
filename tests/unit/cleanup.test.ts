import fs from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { aRequest, anOldCompletedRequest, writeRequestFile } from "../helpers/builders";
import { aClock } from "../helpers/clock";
import { aRecording, aTracker, readRaw, requestPath, tempStateDir } from "../helpers/stateDir";

const HOUR = 60 * 60 * 1000;

function seeded() {
  const stateDir = tempStateDir();
  const now = Date.now();
  writeRequestFile(stateDir, anOldCompletedRequest("old-done"));
  writeRequestFile(stateDir, aRequest({ requestId: "old-failed", state: "failed", lastUpdatedAt: now - 48 * HOUR, createdAt: now - 49 * HOUR }));
  writeRequestFile(stateDir, aRequest({ requestId: "old-queued", state: "queued", lastUpdatedAt: now - 48 * HOUR, createdAt: now - 49 * HOUR }));
  writeRequestFile(stateDir, aRequest({ requestId: "new-done", state: "completed", lastUpdatedAt: now - HOUR }));
  return { stateDir, ...aRecording({ stateDir }) };
}

describe("cleanup", () => {
  it("keeps a request another writer rewrote after it was archived (outside the writers' lock), and drops the stale archived copy", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, anOldCompletedRequest("raced"));
    writeRequestFile(stateDir, anOldCompletedRequest("quiet"));
    const other = aTracker({ stateDir });
    // The cleanup asks the clock twice: for its cutoff, then for the archive's timestamp, which is
    // after it read the files and before it takes the lock. The other writer writes there.
    let [armed, calls] = [false, 0];
    const { tracker, operator } = aRecording({
      stateDir,
      now: () => {
        if (armed && ++calls === 2) other.update("raced", { fields: { output: "written during the cleanup" } });
        return Date.now();
      },
    });
    armed = true;
    const report = operator.cleanup();
    expect(report.ids).toEqual(["quiet"]);
    expect(report.skipped).toEqual([{ requestId: "raced", reason: "changed while it was archived" }]);
    expect(tracker.get("raced")).toMatchObject({ output: "written during the cleanup" });
    expect(() => operator.restore("raced")).toThrow(/exists|not in the archive/);
    expect(operator.restore("quiet").requestId).toBe("quiet");
  });

  it("in a dry run reports what would go and touches nothing", () => {
    const { stateDir, tracker, operator } = seeded();
    const before = fs.readdirSync(`${stateDir}/requests`).sort();
    const report = operator.cleanup({ dryRun: true });
    expect(report).toMatchObject({ dryRun: true, matched: 2, archived: 0, byState: { completed: 1, failed: 1 } });
    expect(report.ids).toEqual(["old-failed", "old-done"]);
    expect(fs.readdirSync(`${stateDir}/requests`).sort()).toEqual(before);
    expect(tracker.get("old-done")).not.toBeNull();
  });

  it("archives terminal requests older than the retention, then deletes their files", () => {
    const { stateDir, tracker, operator } = seeded();
    const report = operator.cleanup();
    expect(report).toMatchObject({ dryRun: false, matched: 2, archived: 2, skipped: [] });
    expect(fs.existsSync(requestPath(stateDir, "old-done"))).toBe(false);
    expect(tracker.get("old-done")).toBeNull();
    expect(tracker.get("old-queued")?.state).toBe("queued");
    expect(tracker.get("new-done")?.state).toBe("completed");
  });

  it("takes the age and the states from the caller", () => {
    const { operator } = seeded();
    const report = operator.cleanup({ olderThanMs: 30 * 60 * 1000, states: ["completed", "queued"] });
    expect(report.ids.sort()).toEqual(["new-done", "old-done", "old-queued"]);
  });

  it("restore brings a request back as it was, recorded in its history", () => {
    const { stateDir, tracker, operator } = seeded();
    const original = JSON.parse(readRaw(stateDir, "old-done"));
    operator.cleanup();
    const restored = operator.restore("old-done");
    expect(restored).toMatchObject({ ...original, lastUpdatedAt: restored.lastUpdatedAt, version: 1 });
    expect(restored.transitions?.at(-1)).toMatchObject({ from: "completed", to: "completed", reason: "restored from the archive" });
    expect(tracker.get("old-done")?.state).toBe("completed");
    expect(() => operator.restore("old-done")).toThrow(/already exists|not in the archive/);
    expect(() => operator.restore("never-archived")).toThrow(/not in the archive/);
  });

  it("an undo restores each request as it was, its last update included: the history says when it was restored, the table sorts it where it was, and a cleanup takes it again only once the restore is that old", async () => {
    const stateDir = tempStateDir();
    const clock = aClock();
    writeRequestFile(stateDir, anOldCompletedRequest("old-done", clock.now()));
    writeRequestFile(stateDir, aRequest({ requestId: "new-done", state: "completed", lastUpdatedAt: clock.now() - HOUR }, clock.now()));
    const { tracker, operator } = aRecording({ stateDir, now: clock.now });
    const before = tracker.get("old-done")!;
    const cleaned = await operator.actions.run({ kind: "cleanup", olderThanMs: 24 * HOUR });
    expect(cleaned.changedIds).toEqual(["old-done"]);
    clock.advance(5 * 60_000);
    await operator.actions.undo(cleaned.id);

    const restored = tracker.get("old-done")!;
    expect(restored).toEqual({
      ...before,
      version: (before.version ?? 0) + 1,
      transitions: [...(before.transitions ?? []), { from: "completed", to: "completed", at: clock.now(), reason: "restored from the archive", by: "restore" }],
    });
    expect(restored.lastUpdatedAt).toBe(before.lastUpdatedAt);
    expect(tracker.list({}).items.map((row) => [row.requestId, row.lastUpdatedAt])).toEqual([
      ["new-done", clock.now() - 5 * 60_000 - HOUR],
      ["old-done", before.lastUpdatedAt],
    ]);
    // Restored a moment ago: a cleanup of what was not updated for a day leaves it, until the restore is a day old too.
    expect(operator.cleanup({ olderThanMs: 24 * HOUR, dryRun: true }).ids).toEqual([]);
    expect((await operator.actions.run({ kind: "cleanup", olderThanMs: 24 * HOUR })).changedIds).toEqual([]);
    clock.advance(24 * HOUR);
    expect(operator.cleanup({ olderThanMs: 24 * HOUR, dryRun: true }).ids).toEqual(["old-done", "new-done"]);
  });

  it("restore of an id archived twice brings back the newest copy, and the older one stays archived", () => {
    const { tracker, reader, operator } = aRecording();
    for (const prompt of ["first", "second"]) {
      tracker.create({ requestId: "reused", workspace: "ws", state: "processing", prompt });
      tracker.transition("reused", "completed");
      expect(operator.cleanup({ olderThanMs: 0 }).ids).toEqual(["reused"]);
    }
    expect(operator.restore("reused")).toMatchObject({ prompt: "second" });
    const archive = new Database(reader.stateDir.archiveFile, { readonly: true });
    expect(archive.prepare("SELECT json_extract(doc, '$.prompt') FROM archived_requests WHERE request_id = 'reused'").pluck().all()).toEqual(["first"]);
    archive.close();
    expect(() => operator.restore("reused")).toThrow(/already exists; it was not restored over/);
  });

  it("never restores over a request that exists", () => {
    const { tracker, operator } = seeded();
    operator.cleanup();
    tracker.create({ requestId: "old-done", workspace: "ws" });
    expect(() => operator.restore("old-done")).toThrow(/already exists; it was not restored over/);
    expect(tracker.get("old-done")?.state).toBe("created");
  });
});
