import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { FEED_RETAINED, feedHead, readChanges, recordChange } from "../../lib/db/changes";
import { openIndex } from "../../lib/db/openIndex";
import { aRequest, anOldCompletedRequest, writeRequestFile } from "../helpers/builders";
import { aRecording, aTracker, requestPath, tempStateDir } from "../helpers/stateDir";

function feedOf(stateDir: string) {
  const { db } = openIndex(`${stateDir}/index.db`);
  try {
    return readChanges(db, 0, 100_000);
  } finally {
    db.close();
  }
}

describe("the change feed", () => {
  it("has one change per write, in commit order, carrying the request's list row", () => {
    const stateDir = tempStateDir();
    const tracker = aTracker({ stateDir });
    tracker.create({ requestId: "a", workspace: "w", state: "queued", model: "m" });
    tracker.create({ requestId: "b", workspace: "w" });
    tracker.transition("a", "processing");
    tracker.update("b", { fields: { prompt: "p" } });

    const changes = feedOf(stateDir);
    expect(changes.map((c) => `${c.kind} ${c.requestId} v${c.request?.version}`)).toEqual([
      "request.upserted a v1",
      "request.upserted b v1",
      "request.upserted a v2",
      "request.upserted b v2",
    ]);
    expect(changes.map((c) => c.seq)).toEqual([...changes.map((c) => c.seq)].sort((x, y) => x - y));
    // The change carries exactly what the table shows for that row.
    const row = tracker.list().items.find((item) => item.requestId === "a");
    expect(changes[2]!.request).toEqual(row);
  });

  it("records a foreign edit once, and nothing for a touch or a second look", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "f", state: "queued" }));
    const { operator } = aRecording({ stateDir });
    const before = feedOf(stateDir).length;

    const later = new Date(Date.now() + 5000);
    fs.utimesSync(requestPath(stateDir, "f"), later, later);
    operator.recover();
    expect(feedOf(stateDir)).toHaveLength(before);

    writeRequestFile(stateDir, aRequest({ requestId: "f", state: "queued", model: "edited by hand" }));
    operator.recover();
    operator.recover();
    const after = feedOf(stateDir);
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)?.request?.model).toBe("edited by hand");
  });

  it("records removals", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, anOldCompletedRequest("old"));
    const { operator } = aRecording({ stateDir });
    operator.cleanup();
    expect(feedOf(stateDir).at(-1)).toMatchObject({ kind: "request.removed", requestId: "old" });
    expect(feedOf(stateDir).at(-1)?.request).toBeUndefined();
  });

  it("does not fill a rebuilt index's feed with one change per file (its clients reset anyway)", () => {
    const stateDir = tempStateDir();
    for (let i = 0; i < 20; i++) writeRequestFile(stateDir, aRequest({ requestId: `r${i}` }));
    const { tracker, reader } = aRecording({ stateDir });
    expect(tracker.list({ limit: 100 }).items).toHaveLength(20);
    expect(reader.feedHead().lastSeq).toBe(0);
    tracker.create({ requestId: "after", workspace: "w" });
    expect(reader.changesSince(0).map((c) => c.requestId)).toEqual(["after"]);
  });

  it("keeps the newest changes and says where it starts", () => {
    const stateDir = tempStateDir();
    const { db } = openIndex(`${stateDir}/index.db`);
    try {
      db.transaction(() => {
        for (let i = 0; i < FEED_RETAINED + 600; i++) recordChange(db, "request.removed", `r${i}`, null, i);
      })();
      const head = feedHead(db);
      expect(head.lastSeq).toBe(FEED_RETAINED + 600);
      expect(head.oldestSeq).toBeGreaterThan(1);
      expect(head.lastSeq - head.oldestSeq + 1).toBeLessThanOrEqual(FEED_RETAINED + 500);
      expect(readChanges(db, 0, 1)[0]?.seq).toBe(head.oldestSeq);
      expect(readChanges(db, head.lastSeq - 3).map((c) => c.seq)).toEqual([head.lastSeq - 2, head.lastSeq - 1, head.lastSeq]);
    } finally {
      db.close();
    }
  });
});
