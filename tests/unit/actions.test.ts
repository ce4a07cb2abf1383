import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { aRequest, aRequestIn, writeRequestFile } from "../helpers/builders";
import { aTracker, requestPath, tempStateDir } from "../helpers/stateDir";

const HOUR = 60 * 60 * 1000;

function aFailedBatch(count: number) {
  const stateDir = tempStateDir();
  for (let i = 0; i < count; i++) writeRequestFile(stateDir, aRequestIn("failed", `f${String(i).padStart(4, "0")}`));
  writeRequestFile(stateDir, aRequestIn("completed", "done-1"));
  return { stateDir, tracker: aTracker({ stateDir }) };
}

describe("bulk actions", () => {
  it("a retry preview says how many, which states and the first ids, and changes nothing", () => {
    const { tracker } = aFailedBatch(30);
    const preview = tracker.actions.preview({ kind: "retry", filter: { states: ["failed", "completed"] } });
    expect(preview).toMatchObject({ kind: "retry", matched: 31, willChange: 30, byState: { failed: 30 } });
    expect(preview.firstIds).toHaveLength(20);
    expect(preview.skipped).toEqual([{ reason: "it is completed: nothing to retry", count: 1, ids: ["done-1"] }]);
    expect(tracker.countsByState().failed).toBe(30);
  });

  it("a retry does what its preview showed, in chunks, and the audit log says so", async () => {
    const { tracker } = aFailedBatch(30);
    const preview = tracker.actions.preview({ kind: "retry", filter: { states: ["failed", "completed"] } });
    const progress: number[] = [];
    const entry = await tracker.actions.run({ kind: "retry", filter: { states: ["failed", "completed"] } }, { chunkSize: 7, onProgress: (p) => progress.push(p.changed + p.skipped) });
    expect(entry).toMatchObject({ kind: "retry", status: "done", matched: 31, changed: preview.willChange, skipped: 1 });
    expect(progress).toEqual([7, 14, 21, 28, 31]);
    expect(tracker.countsByState()).toMatchObject({ failed: 0, queued: 30, completed: 1 });
    expect(tracker.get("f0001")?.transitions?.at(-1)).toMatchObject({ from: "failed", to: "queued", by: `dashboard (action #${entry.id})`, manual: true });
    expect(tracker.actions.list()[0]).toMatchObject({ id: entry.id, summary: "Retry every request matching: states failed, completed" });
  });

  it("a cleanup is archived, then undone from its audit entry", async () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "old-1", state: "completed", lastUpdatedAt: Date.now() - 48 * HOUR }));
    writeRequestFile(stateDir, aRequest({ requestId: "old-2", state: "failed", lastUpdatedAt: Date.now() - 48 * HOUR }));
    writeRequestFile(stateDir, aRequest({ requestId: "new-1", state: "completed", lastUpdatedAt: Date.now() - HOUR }));
    const tracker = aTracker({ stateDir });
    const preview = tracker.actions.preview({ kind: "cleanup", olderThanMs: 24 * HOUR });
    expect(preview).toMatchObject({ matched: 2, byState: { completed: 1, failed: 1 } });

    const cleaned = await tracker.actions.run({ kind: "cleanup", olderThanMs: 24 * HOUR });
    expect(cleaned).toMatchObject({ status: "done", changed: 2, skipped: 0 });
    expect(cleaned.changedIds.sort()).toEqual(["old-1", "old-2"]);
    expect(fs.existsSync(requestPath(stateDir, "old-1"))).toBe(false);

    const undo = await tracker.actions.undo(cleaned.id);
    expect(undo).toMatchObject({ kind: "undo", status: "done", changed: 2, undoes: cleaned.id });
    expect(tracker.get("old-1")?.state).toBe("completed");
    expect(tracker.get("old-2")?.state).toBe("failed");
    expect(tracker.actions.entry(cleaned.id)).toMatchObject({ undoneBy: undo.id });
    await expect(tracker.actions.undo(cleaned.id)).rejects.toMatchObject({ code: "BAD_INPUT" });
    await expect(tracker.actions.undo(undo.id)).rejects.toMatchObject({ code: "BAD_INPUT" });
  });

  it("an undo skips a request whose id was used again, and says why", async () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "old-1", state: "completed", lastUpdatedAt: Date.now() - 48 * HOUR }));
    const tracker = aTracker({ stateDir });
    const cleaned = await tracker.actions.run({ kind: "cleanup", olderThanMs: 24 * HOUR });
    tracker.create({ requestId: "old-1", workspace: "w", state: "queued" });
    const undo = await tracker.actions.undo(cleaned.id);
    expect(undo).toMatchObject({ changed: 0, skipped: 1, skipReasons: [{ reason: "a request with this id exists again", count: 1 }] });
    expect(tracker.get("old-1")?.state).toBe("queued");
  });

  it("refuses bad input and writes no audit entry", async () => {
    const { tracker } = aFailedBatch(1);
    expect(() => tracker.actions.preview({ kind: "retry" })).toThrow(/ids or a filter/);
    await expect(tracker.actions.run({ kind: "cleanup", olderThanMs: -1 })).rejects.toMatchObject({ code: "BAD_INPUT" });
    await expect(tracker.actions.run({ kind: "cleanup", olderThanMs: 1, states: ["bogus" as never] })).rejects.toThrow(/Unknown state "bogus"/);
    expect(tracker.actions.list()).toEqual([]);
  });

  it("an entry left running by a process that is gone is closed as interrupted", async () => {
    const { stateDir, tracker } = aFailedBatch(3);
    const entry = await tracker.actions.run({ kind: "retry", ids: ["f0000"] });
    tracker.close();
    // Simulate a server killed mid-action: the entry still says running, under a dead pid.
    const Database = (await import("better-sqlite3")).default;
    const db = new Database(`${stateDir}/archive.db`);
    db.prepare("UPDATE audit_log SET status = 'running', finished_at = NULL, pid = 999999999 WHERE id = ?").run(entry.id);
    db.close();
    const reopened = aTracker({ stateDir });
    expect(reopened.actions.closeInterrupted().map((e) => e.id)).toEqual([entry.id]);
    expect(reopened.actions.entry(entry.id)).toMatchObject({ status: "failed", error: expect.stringMatching(/^Interrupted/) });
  });
});
