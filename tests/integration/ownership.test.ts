import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isReqwatchError } from "../../lib/errors";
import { MARKER_FILE } from "../../lib/ownership";
import { openRuntime } from "../../lib/server/runtime";
import { openTracker } from "../../lib/tracker";
import { aClaimedRequest, aRequest, anOldCompletedRequest, writeRequestFile } from "../helpers/builders";
import { aDeadPid } from "../helpers/processes";
import { aTracker, readRaw, tempForeignDir, tempParent, tempStateDir } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";

const HOUR = 60 * 60 * 1000;

function refused(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isReqwatchError(error, "READ_ONLY")) return error.message;
    throw error;
  }
  throw new Error("the write was not refused");
}

describe("a folder another program writes is observed, never written", () => {
  it("is read into an index under the cache directory, and every write is refused with nothing changed", async () => {
    const stateDir = tempForeignDir();
    writeRequestFile(stateDir, aRequest({ requestId: "queued-one", state: "queued" }));
    writeRequestFile(stateDir, anOldCompletedRequest("old"));
    writeRequestFile(stateDir, aRequest({ requestId: "hung", state: "processing", processingStartedAt: Date.now() - 3 * HOUR }));
    const before = treeSnapshot(stateDir);

    const tracker = aTracker({ stateDir });

    expect(tracker.ownership).toMatchObject({ access: "observed", reason: "reqwatch did not create this folder: it holds files and no reqwatch marker (reqwatch.json)" });
    expect(tracker.stateDir.indexFile.startsWith(process.env.REQWATCH_CACHE_DIR!)).toBe(true);
    expect(tracker.list().items.map((r) => r.requestId).sort()).toEqual(["hung", "old", "queued-one"]);
    // The owner's start-up recovery does not run here: the hung request is only flagged.
    expect(tracker.get("hung")?.state).toBe("processing");
    expect(tracker.monitorPass().stuck.map((s) => s.reason)).toEqual(["processing 3h; no reqwatch worker holds it (written by another program)"]);
    expect(tracker.cleanup({ dryRun: true }).matched).toBe(1);
    expect(tracker.retry({ ids: ["hung"] }, { dryRun: true }).retried).toHaveLength(1);

    expect(refused(() => tracker.create({ workspace: "w" }))).toMatch(/^Writing is refused: .* is observed read-only \(reqwatch did not create this folder/);
    refused(() => tracker.transition("queued-one", "processing"));
    refused(() => tracker.claimNext());
    refused(() => tracker.retry({ ids: ["hung"] }));
    expect(refused(() => tracker.cleanup())).toMatch(/^Cleanup is refused/);
    refused(() => tracker.recover());
    refused(() => tracker.recordResult("hung", "t", { outcome: "completed" }));
    await expect(tracker.actions.run({ kind: "retry", ids: ["hung"] })).rejects.toMatchObject({ code: "READ_ONLY" });
    expect(tracker.sessions.start()).toMatchObject({ ok: false, error: { code: "READ_ONLY" } });
    tracker.startIngest().stop();
    tracker.close();

    expect(treeSnapshot(stateDir)).toEqual(before);
  });

  it("opens a folder reqwatch manages read-only when asked, and writes nothing there", () => {
    const stateDir = tempStateDir();
    aTracker({ stateDir }).create({ requestId: "mine", workspace: "w", state: "queued" });
    const before = treeSnapshot(stateDir);
    const tracker = aTracker({ stateDir, readOnly: true });
    expect(tracker.ownership).toMatchObject({ access: "observed", reason: "it was opened read-only" });
    expect(tracker.get("mine")?.state).toBe("queued");
    expect(refused(() => tracker.transition("mine", "processing"))).toMatch(/open it without --read-only/);
    tracker.close();
    expect(treeSnapshot(stateDir)).toEqual(before);
  });
});

describe("which folders reqwatch manages", () => {
  it("one it creates, an empty one, and one an earlier reqwatch made (index.db) without any step", () => {
    const parent = tempParent();
    const created = path.join(parent, "new");
    expect(openTracker({ stateDir: created }).ownership.access).toBe("managed");
    expect(JSON.parse(fs.readFileSync(path.join(created, MARKER_FILE), "utf8"))).toMatchObject({ reqwatch: "state directory", how: "created" });

    const empty = path.join(parent, "empty");
    fs.mkdirSync(empty);
    expect(openTracker({ stateDir: empty }).ownership.access).toBe("managed");

    const earlier = path.join(parent, "earlier");
    const tracker = openTracker({ stateDir: earlier });
    tracker.create({ requestId: "r", workspace: "w" });
    tracker.close();
    fs.rmSync(path.join(earlier, MARKER_FILE));
    const reopened = openTracker({ stateDir: earlier });
    expect(reopened.ownership.access).toBe("managed");
    reopened.transition("r", "queued");
    reopened.close();
    expect(fs.existsSync(path.join(earlier, MARKER_FILE))).toBe(true);
  });

  it("a reader never creates the folder", () => {
    const missing = path.join(tempParent(), "nope");
    expect(() => openTracker({ stateDir: missing, create: false })).toThrow(expect.objectContaining({ code: "NOT_FOUND", message: `The state directory ${missing} does not exist.` }));
    expect(fs.existsSync(missing)).toBe(false);
  });
});

describe("the dashboard's runtime changes nothing by looking", () => {
  it("does not time out another program's hung request; releases only a dead reqwatch worker's claim", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "gateway-hung", state: "processing", processingStartedAt: Date.now() - 2 * HOUR, createdAt: Date.now() - 2 * HOUR }));
    const claimedAt = Date.now() - 10 * 60 * 1000;
    writeRequestFile(stateDir, aClaimedRequest("orphaned", { token: "t", pid: aDeadPid(), claimedAt, heartbeatAt: claimedAt }));
    const hungBefore = readRaw(stateDir, "gateway-hung");

    const runtime = openRuntime({ stateDir, monitorIntervalMs: 60_000 });
    try {
      expect(readRaw(stateDir, "gateway-hung")).toBe(hungBefore);
      expect(runtime.tracker.get("orphaned")?.state).toBe("queued");
      expect(runtime.recoveryNotice).toEqual({ total: 1, outcomes: { queued: ["orphaned"] } });
      expect(runtime.stuck().map((s) => [s.requestId, s.reason])).toEqual([["gateway-hung", "processing 2h; no reqwatch worker holds it (written by another program)"]]);
    } finally {
      runtime.close();
    }
  });
});
