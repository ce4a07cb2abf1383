import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openIndex } from "../../lib/db/openIndex";
import { aRequest, aRequestIn, writeRequestFile } from "../helpers/builders";
import { aClock } from "../helpers/clock";
import { aRecording, aTracker, readRaw, requestPath, tempStateDir } from "../helpers/stateDir";

const HOUR = 60 * 60 * 1000;

function aFailedBatch(count: number) {
  const stateDir = tempStateDir();
  for (let i = 0; i < count; i++) writeRequestFile(stateDir, aRequestIn("failed", `f${String(i).padStart(4, "0")}`));
  writeRequestFile(stateDir, aRequestIn("completed", "done-1"));
  return { stateDir, ...aRecording({ stateDir }) };
}

describe("bulk actions", () => {
  it("a retry's dry run says how many, which states and the first ids, and changes nothing", () => {
    const { reader, operator } = aFailedBatch(30);
    const dryRun = operator.actions.dryRun({ kind: "retry", filter: { states: ["failed", "completed"] } });
    expect(dryRun).toMatchObject({ kind: "retry", matched: 31, willChange: 30, byState: { failed: 30 } });
    expect(dryRun.firstIds).toHaveLength(20);
    expect(dryRun.skipped).toEqual([{ reason: "it is completed: nothing to retry", count: 1, ids: ["done-1"] }]);
    expect(reader.countsByState().failed).toBe(30);
  });

  it("a retry does what its dry run showed, in chunks, and the audit log says so", async () => {
    const { tracker, reader, operator } = aFailedBatch(30);
    const dryRun = operator.actions.dryRun({ kind: "retry", filter: { states: ["failed", "completed"] } });
    const progress: number[] = [];
    const entry = await operator.actions.run(
      { kind: "retry", filter: { states: ["failed", "completed"] } },
      { chunkSize: 7, onProgress: (p) => progress.push(p.changed + p.skipped) },
    );
    expect(entry).toMatchObject({ kind: "retry", status: "done", matched: 31, changed: dryRun.willChange, skipped: 1 });
    expect(progress).toEqual([7, 14, 21, 28, 31]);
    expect(reader.countsByState()).toMatchObject({ failed: 0, queued: 30, completed: 1 });
    expect(tracker.get("f0001")?.transitions?.at(-1)).toMatchObject({ from: "failed", to: "queued", by: `dashboard (action #${entry.id})`, manual: true });
    expect(operator.actions.list()[0]).toMatchObject({ id: entry.id, summary: "Retry 31 requests matching failed or completed" });
  });

  it("a cleanup is archived, then undone from its audit entry", async () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "old-1", state: "completed", lastUpdatedAt: Date.now() - 48 * HOUR }));
    writeRequestFile(stateDir, aRequest({ requestId: "old-2", state: "failed", lastUpdatedAt: Date.now() - 48 * HOUR }));
    writeRequestFile(stateDir, aRequest({ requestId: "new-1", state: "completed", lastUpdatedAt: Date.now() - HOUR }));
    const { tracker, operator } = aRecording({ stateDir });
    const dryRun = operator.actions.dryRun({ kind: "cleanup", olderThanMs: 24 * HOUR });
    expect(dryRun).toMatchObject({ matched: 2, byState: { completed: 1, failed: 1 } });

    const cleaned = await operator.actions.run({ kind: "cleanup", olderThanMs: 24 * HOUR });
    expect(cleaned).toMatchObject({ status: "done", changed: 2, skipped: 0 });
    expect(cleaned.changedIds.sort()).toEqual(["old-1", "old-2"]);
    expect(fs.existsSync(requestPath(stateDir, "old-1"))).toBe(false);

    const undo = await operator.actions.undo(cleaned.id);
    expect(undo).toMatchObject({ kind: "undo", status: "done", changed: 2, undoes: cleaned.id });
    expect(tracker.get("old-1")?.state).toBe("completed");
    expect(tracker.get("old-2")?.state).toBe("failed");
    expect(operator.actions.entry(cleaned.id)).toMatchObject({ undoneBy: undo.id });
    await expect(operator.actions.undo(cleaned.id)).rejects.toMatchObject({ code: "BAD_INPUT" });
    await expect(operator.actions.undo(undo.id)).rejects.toMatchObject({ code: "BAD_INPUT" });
  });

  it("an undo skips a request whose id was used again, and says why", async () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "old-1", state: "completed", lastUpdatedAt: Date.now() - 48 * HOUR }));
    const { tracker, operator } = aRecording({ stateDir });
    const cleaned = await operator.actions.run({ kind: "cleanup", olderThanMs: 24 * HOUR });
    tracker.create({ requestId: "old-1", workspace: "w", state: "queued" });
    const undo = await operator.actions.undo(cleaned.id);
    expect(undo).toMatchObject({ changed: 0, skipped: 1, skipReasons: [{ reason: "a request with this id exists again", count: 1 }] });
    expect(tracker.get("old-1")?.state).toBe("queued");
  });

  it("a cleanup of an id used again keeps the first request's archived copy: each undo restores the copy its cleanup archived", async () => {
    const clock = aClock();
    const { tracker, operator } = aRecording({ now: clock.now });
    tracker.create({ requestId: "reused", workspace: "gw", state: "processing", prompt: "the first request" });
    tracker.transition("reused", "completed");
    clock.advance(25 * HOUR);
    const first = await operator.actions.run({ kind: "cleanup", olderThanMs: 24 * HOUR });
    // The gateway hands out the same id again.
    tracker.create({ requestId: "reused", workspace: "gw", state: "processing", prompt: "the second request" });
    tracker.transition("reused", "failed");
    clock.advance(25 * HOUR);
    const second = await operator.actions.run({ kind: "cleanup", olderThanMs: 24 * HOUR });
    expect([first.changedIds, second.changedIds]).toEqual([["reused"], ["reused"]]);

    expect(operator.actions.dryRunUndo(first.id)).toMatchObject({ willChange: 1, skipped: [] });
    expect(await operator.actions.undo(first.id)).toMatchObject({ status: "done", changed: 1, skipped: 0 });
    expect(tracker.get("reused")).toMatchObject({ prompt: "the first request", state: "completed" });

    // The second request's copy is still archived; its undo would restore over the first, so it says so for that id.
    expect(operator.actions.dryRunUndo(second.id)).toMatchObject({
      willChange: 0,
      skipped: [{ reason: "a request with this id exists again", ids: ["reused"] }],
    });
    clock.advance(25 * HOUR);
    expect(operator.cleanup().ids).toEqual(["reused"]);
    expect(await operator.actions.undo(second.id)).toMatchObject({ status: "done", changed: 1, skipped: 0 });
    expect(tracker.get("reused")).toMatchObject({ prompt: "the second request", state: "failed" });
  });

  it("an archive from before copies were kept is migrated in place: a cleanup's undo still restores what it archived, and nothing is lost", async () => {
    const stateDir = tempStateDir();
    const at = Date.now() - 48 * HOUR;
    // archive.db as the earlier schema left it: one row per id, and an audit log without in_flight.
    const legacy = new Database(`${stateDir}/archive.db`);
    legacy.exec(`
      CREATE TABLE archived_requests (id TEXT PRIMARY KEY, workspace TEXT NOT NULL, state TEXT NOT NULL, version INTEGER NOT NULL, archived_at INTEGER NOT NULL, doc TEXT NOT NULL);
      CREATE INDEX archived_by_time ON archived_requests (archived_at);
      CREATE TABLE audit_log (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, by TEXT NOT NULL, pid INTEGER NOT NULL, started_at INTEGER NOT NULL,
        finished_at INTEGER, status TEXT NOT NULL, summary TEXT NOT NULL, target TEXT NOT NULL, matched INTEGER NOT NULL DEFAULT 0, changed INTEGER NOT NULL DEFAULT 0,
        skipped INTEGER NOT NULL DEFAULT 0, skip_reasons TEXT NOT NULL DEFAULT '[]', changed_ids TEXT NOT NULL DEFAULT '[]', error TEXT, undone_at INTEGER, undone_by INTEGER, undoes INTEGER);
    `);
    legacy
      .prepare(
        "INSERT INTO audit_log (kind, by, pid, started_at, finished_at, status, summary, target, matched, changed, changed_ids) VALUES ('cleanup', 'dashboard', 1, ?, ?, 'done', 'Clean up', '{}', 1, 1, ?)",
      )
      .run(at, at + 10, JSON.stringify(["by-action"]));
    const archived = (id: string, archivedAt: number) =>
      legacy
        .prepare("INSERT INTO archived_requests VALUES (?, 'ws', 'completed', 0, ?, ?)")
        .run(id, archivedAt, JSON.stringify(aRequest({ requestId: id, state: "completed", lastUpdatedAt: at - HOUR })));
    archived("by-action", at + 5);
    archived("by-command", at + 100);
    legacy.close();

    const { tracker, operator } = aRecording({ stateDir });
    expect(operator.actions.dryRunUndo(1)).toMatchObject({ willChange: 1, firstIds: ["by-action"] });
    // The same id archived again now sits beside the migrated copy, not over it.
    tracker.create({ requestId: "by-action", workspace: "ws", state: "processing", prompt: "the id used again" });
    tracker.transition("by-action", "completed");
    expect(operator.cleanup({ olderThanMs: 0 }).ids).toEqual(["by-action"]);
    expect(await operator.actions.undo(1)).toMatchObject({ status: "done", changed: 1 });
    expect(tracker.get("by-action")).toMatchObject({ state: "completed", lastUpdatedAt: expect.any(Number) });
    expect(tracker.get("by-action")?.prompt).toBeUndefined();
    expect(operator.restore("by-command").requestId).toBe("by-command");

    const migrated = new Database(`${stateDir}/archive.db`, { readonly: true });
    expect(migrated.pragma("user_version", { simple: true })).toBe(1);
    expect(migrated.prepare("SELECT request_id, json_extract(doc, '$.prompt') AS prompt FROM archived_requests").all()).toEqual([
      { request_id: "by-action", prompt: "the id used again" },
    ]);
    migrated.close();
  });

  it("refuses bad input and writes no audit entry", async () => {
    const { operator } = aFailedBatch(1);
    expect(() => operator.actions.dryRun({ kind: "retry" })).toThrow("A retry needs ids or a filter.");
    expect(() => operator.actions.dryRun({ kind: "retry", ids: ["f0000"], filter: { states: ["failed"] } })).toThrow(
      "A retry takes ids or a filter, not both.",
    );
    await expect(operator.actions.run({ kind: "retry", ids: ["f0000"], filter: { states: ["failed"] } })).rejects.toThrow(
      "A retry takes ids or a filter, not both.",
    );
    expect(() => operator.retry({ ids: ["f0000"], filter: { states: ["failed"] } })).toThrow("A retry takes ids or a filter, not both.");
    await expect(operator.actions.run({ kind: "cleanup", olderThanMs: -1 })).rejects.toMatchObject({ code: "BAD_INPUT" });
    await expect(operator.actions.run({ kind: "cleanup", olderThanMs: 1, states: ["bogus" as never] })).rejects.toThrow(/Unknown state "bogus"/);
    expect(operator.actions.list()).toEqual([]);
  });

  it("an entry left running by a process that is gone is closed as interrupted", async () => {
    const { stateDir, tracker, operator } = aFailedBatch(3);
    const entry = await operator.actions.run({ kind: "retry", ids: ["f0000"] });
    tracker.close();
    // Simulate a server killed mid-action: the entry still says running, under a dead pid.
    const Database = (await import("better-sqlite3")).default;
    const db = new Database(`${stateDir}/archive.db`);
    db.prepare("UPDATE audit_log SET status = 'running', finished_at = NULL, pid = 999999999 WHERE id = ?").run(entry.id);
    db.close();
    const reopened = aRecording({ stateDir }).operator;
    expect(reopened.actions.closeInterrupted().map((e) => e.id)).toEqual([entry.id]);
    expect(reopened.actions.entry(entry.id)).toMatchObject({ status: "failed", error: expect.stringMatching(/^Interrupted/) });
  });

  it("a run after a dry run acts on what the dry run described and on no other: a cleanup keeps its set and cutoff, and says what changed since", async () => {
    const clock = { now: Date.now() };
    const stateDir = tempStateDir();
    // Finished 59, 61 and 62 minutes ago: after two minutes more, a cutoff taken afresh would take in "a" too.
    for (const [id, ago] of [
      ["a", 59],
      ["b", 61],
      ["c", 62],
    ] as const) {
      writeRequestFile(stateDir, aRequest({ requestId: id, state: id === "c" ? "failed" : "completed", lastUpdatedAt: clock.now - ago * 60_000 }));
    }
    const { tracker, operator } = aRecording({ stateDir, now: () => clock.now });
    const dryRun = operator.actions.dryRun({ kind: "cleanup", olderThanMs: HOUR });
    expect(dryRun).toMatchObject({ matched: 2, willChange: 2, byState: { completed: 1, failed: 1 }, cutoff: clock.now - HOUR });

    clock.now += 2 * 60_000;
    tracker.transition("c", "queued");
    const entry = await operator.actions.run({ kind: "cleanup", olderThanMs: HOUR, dryRunId: dryRun.dryRunId });
    expect(entry).toMatchObject({
      status: "done",
      matched: 2,
      changed: 1,
      skipped: 1,
      changedIds: ["b"],
      skipReasons: [{ reason: "changed since the dry run", ids: ["c"] }],
    });
    expect(tracker.get("a")?.state).toBe("completed");
    // A dry run serves one run; an unknown one is refused and nothing runs.
    await expect(operator.actions.run({ kind: "cleanup", olderThanMs: HOUR, dryRunId: dryRun.dryRunId })).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/^Dry run \S+ is not known/),
    });
  });

  it("a retry by filter after its dry run leaves out what matches only since", async () => {
    const { tracker, operator } = aFailedBatch(3);
    const dryRun = operator.actions.dryRun({ kind: "retry", filter: { states: ["failed"] } });
    tracker.create({ requestId: "new-failure", workspace: "w", state: "processing" });
    tracker.transition("new-failure", "failed");
    const entry = await operator.actions.run({ kind: "retry", filter: { states: ["failed"] }, dryRunId: dryRun.dryRunId });
    expect(entry).toMatchObject({ matched: 3, changed: 3 });
    expect(tracker.get("new-failure")?.state).toBe("failed");
  });

  it("cancels a queued request and a processing one; the worker's late result is dropped; audited with the ids", async () => {
    const { tracker, operator } = aRecording();
    tracker.create({ requestId: "running", workspace: "nightly", state: "queued" });
    const claim = tracker.claimNext()!;
    expect(claim.request.requestId).toBe("running");
    tracker.create({ requestId: "waiting", workspace: "nightly", state: "queued" });
    tracker.create({ requestId: "done", workspace: "nightly", state: "processing" });
    tracker.transition("done", "completed");

    const dryRun = operator.actions.dryRun({ kind: "cancel", ids: ["waiting", "running", "done"] });
    expect(dryRun).toMatchObject({
      matched: 3,
      willChange: 2,
      byState: { processing: 1, queued: 1 },
      skipped: [{ reason: "it is completed: already finished", ids: ["done"] }],
    });
    const entry = await operator.actions.run({ kind: "cancel", ids: ["waiting", "running", "done"] });
    expect(entry).toMatchObject({
      kind: "cancel",
      status: "done",
      changed: 2,
      skipped: 1,
      changedIds: ["waiting", "running"],
      summary: "Cancel 3 requests: waiting, running, done",
    });
    expect(tracker.get("waiting")).toMatchObject({ state: "failed", error: "cancelled" });
    expect(tracker.get("waiting")?.transitions?.at(-1)).toMatchObject({
      from: "queued",
      to: "failed",
      reason: "cancelled",
      by: `dashboard (action #${entry.id})`,
    });

    expect(tracker.complete("running", claim.token, { output: "too late" })).toMatchObject({
      outcome: "dropped",
      reason: "late completion dropped: the request is already failed",
    });
    expect(tracker.get("running")).toMatchObject({ state: "failed", error: "cancelled", claim: null });
  });

  it("an undo has a dry run, and a second undo of the same cleanup is refused while the first runs", async () => {
    const stateDir = tempStateDir();
    for (let i = 0; i < 30; i++) writeRequestFile(stateDir, aRequest({ requestId: `old-${i}`, state: "completed", lastUpdatedAt: Date.now() - 48 * HOUR }));
    const { tracker, operator } = aRecording({ stateDir });
    const cleanup = await operator.actions.run({ kind: "cleanup", olderThanMs: 24 * HOUR });
    tracker.create({ requestId: "old-3", workspace: "w" });

    expect(operator.actions.dryRunUndo(cleanup.id)).toMatchObject({
      kind: "undo",
      matched: 30,
      willChange: 29,
      skipped: [{ reason: "a request with this id exists again", ids: ["old-3"] }],
    });
    let undoId = 0;
    const first = operator.actions.undo(cleanup.id, { chunkSize: 1, onStart: (id) => (undoId = id) });
    expect(undoId).toBeGreaterThan(0);
    await expect(operator.actions.undo(cleanup.id)).rejects.toMatchObject({ code: "BAD_INPUT", message: `Entry ${cleanup.id} is being undone (#${undoId}).` });
    expect(await first).toMatchObject({ status: "done", changed: 29, skipped: 1 });
  });

  it("a confirmation that asks other than its dry run is refused and changes nothing; the dry run then serves the confirmation that asks the same", async () => {
    const stateDir = tempStateDir();
    for (const [id, workspace] of [
      ["f-a", "alpha"],
      ["f-b", "beta"],
    ] as const)
      writeRequestFile(stateDir, aRequest({ requestId: id, workspace, state: "failed" }));
    writeRequestFile(stateDir, aRequest({ requestId: "t-z", workspace: "zzz", state: "timeout" }));
    for (const id of ["C", "D"]) writeRequestFile(stateDir, aRequest({ requestId: id, workspace: "w", state: "queued" }));
    const { tracker, operator } = aRecording({ stateDir });
    const before = ["f-a", "f-b", "t-z", "C", "D"].map((id) => readRaw(stateDir, id));

    const retryDryRun = operator.actions.dryRun({ kind: "retry", filter: { states: ["failed"] } });
    await expect(
      operator.actions.run({ kind: "retry", filter: { states: ["timeout"], workspace: "zzz" }, dryRunId: retryDryRun.dryRunId }),
    ).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: `This confirmation asks "Retry every request matching timeout in zzz", but dry run ${retryDryRun.dryRunId} was "Retry 2 requests matching failed". Nothing was done: confirm with the dry run's own arguments, or make a new dry run.`,
    });
    const cancelDryRun = operator.actions.dryRun({ kind: "cancel", ids: ["C"] });
    await expect(operator.actions.run({ kind: "cancel", ids: ["D"], dryRunId: cancelDryRun.dryRunId })).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining('asks "Cancel D", but dry run'),
    });
    await expect(operator.actions.run({ kind: "retry", ids: ["C"], dryRunId: cancelDryRun.dryRunId })).rejects.toMatchObject({ code: "BAD_INPUT" });
    expect(["f-a", "f-b", "t-z", "C", "D"].map((id) => readRaw(stateDir, id))).toEqual(before);
    expect(operator.actions.list()).toEqual([]);

    // Refused, the dry runs are still there for the confirmations that ask what they were asked.
    const cancelled = await operator.actions.run({ kind: "cancel", ids: ["C"], dryRunId: cancelDryRun.dryRunId });
    expect(cancelled).toMatchObject({ status: "done", summary: "Cancel C", target: { ids: ["C"] }, matched: 1, changedIds: ["C"] });
    expect(tracker.get("D")?.state).toBe("queued");
    const retried = await operator.actions.run({ kind: "retry", filter: { states: ["failed"] }, dryRunId: retryDryRun.dryRunId });
    expect(retried).toMatchObject({ status: "done", summary: "Retry 2 requests matching failed", target: { filter: { states: ["failed"] } }, matched: 2 });
    expect(retried.changedIds.sort()).toEqual(["f-a", "f-b"]);
    expect(tracker.get("t-z")?.state).toBe("timeout");
  });

  it("a dry run is kept in the index, where another tracker on the folder confirms it, until it expires", async () => {
    const stateDir = tempStateDir();
    for (const id of ["one", "two"]) writeRequestFile(stateDir, aRequestIn("failed", id));
    const clock = aClock();
    const dashboard = aRecording({ stateDir, now: clock.now }).operator;
    const agent = aRecording({ stateDir, now: clock.now });

    const dryRun = dashboard.actions.dryRun({ kind: "retry", ids: ["one"] });
    expect(await agent.operator.actions.run({ kind: "retry", ids: ["one"], dryRunId: dryRun.dryRunId })).toMatchObject({ status: "done", changedIds: ["one"] });

    const late = dashboard.actions.dryRun({ kind: "retry", ids: ["two"] });
    clock.advance(15 * 60_000);
    const refused = agent.operator.actions.run({ kind: "retry", ids: ["two"], dryRunId: late.dryRunId });
    await expect(refused).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: `Dry run ${late.dryRunId} is not known: it expired (a dry run is kept 15m), was confirmed already, or was made on another state folder. Make the dry run again.`,
    });
    expect(agent.tracker.get("two")?.state).toBe("failed");
  });

  it("an index from before dry runs were kept gets their table at its next open, and keeps its requests without a rebuild", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequestIn("failed", "kept"));
    aTracker({ stateDir }).close();
    const indexFile = path.join(stateDir, "index.db");
    const old = new Database(indexFile);
    old.exec("DROP TABLE IF EXISTS dry_runs");
    old.close();

    const reopened = openIndex(indexFile);
    expect(reopened.needsRebuild).toBe(false);
    expect(reopened.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'dry_runs'").pluck().get()).toBe("dry_runs");
    expect(reopened.db.prepare("SELECT count(*) FROM requests").pluck().get()).toBe(1);
    reopened.db.close();
    const { operator } = aRecording({ stateDir });
    expect(operator.actions.dryRun({ kind: "retry", ids: ["kept"] })).toMatchObject({ willChange: 1 });
  });
});
