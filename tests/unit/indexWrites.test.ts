import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { removeIndexFiles } from "../../lib/db/openIndex";
import { ACTIVITY_RANGES } from "../../lib/model/activity";
import type { Reader } from "../../lib/roles/reader";
import type { Tracker } from "../../lib/types";
import { aRecording, aTracker, tempStateDir } from "../helpers/stateDir";

/**
 * A write changes the index in place (only the columns, attempts and text that changed); a rebuild
 * makes it afresh from the files. Both must give the same answers.
 */

function without(row: object, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([key]) => !keys.includes(key)));
}

/** Everything a reader is shown: the list, the counts, the workers, the charts, and what each word finds. */
function shown(reader: Reader, words: string[]) {
  const to = Date.now() + 60_000;
  return {
    list: reader.list({ limit: 500 }).items,
    counts: reader.countsByState(),
    // A heartbeat goes to the index only (not the file): a rebuild knows the claim's time instead.
    workers: reader.workers().map((worker) => without(worker, ["heartbeatAt"])),
    charts: Object.values(ACTIVITY_RANGES).map(
      ({ rangeMs, pointMs, spanMs }) => reader.activity({ spanMs, pointMs, from: to - rangeMs, to, match: null }).rows,
    ),
    found: Object.fromEntries(
      words.map((word) => [
        word,
        reader
          .list({ text: word, limit: 500 })
          .items.map((item) => item.requestId)
          .sort(),
      ]),
    ),
  };
}

/** The index's own rows, but for what only the index knows (row numbers, heartbeats, reservations). */
function indexRows(stateDir: string) {
  const db = new Database(path.join(stateDir, "index.db"), { readonly: true });
  try {
    return {
      requests: db
        .prepare("SELECT * FROM requests ORDER BY id")
        .all()
        .map((row) => without(row as object, ["heartbeat_at", "reserved_until", "reserved_by"])),
      attempts: db.prepare("SELECT * FROM attempts ORDER BY request_id, number").all(),
      transitions: db.prepare("SELECT * FROM transitions ORDER BY request_id, seq").all(),
      // A live state's in and out in one interval nets to a row of 0, which a recount leaves out: the same chart.
      activity: db.prepare("SELECT * FROM activity WHERE n != 0 ORDER BY span, bucket, workspace, metric, bin").all(),
      stateCounts: db.prepare("SELECT * FROM state_counts ORDER BY state").all(),
    };
  } finally {
    db.close();
  }
}

/** A worker's day in miniature: creates, claims with heartbeats, completions, a retried failure, a final one, a cancel, a retry. */
function workTheQueue(tracker: Tracker): void {
  const output = (i: number) => ({ output: `Summary ${i}: the flaky suite waits on a socket`, tokens: 100 + i });
  for (let i = 0; i < 8; i++)
    tracker.create({ requestId: `r${i}`, workspace: `w${i % 3}`, sessionId: `s${i % 2}`, state: "queued", prompt: `Fix ticket T${i} in the parser` });
  for (let i = 0; i < 6; i++) {
    const claim = tracker.claimNext()!;
    tracker.heartbeat(claim.request.requestId, claim.token);
    if (i === 2) tracker.fail(claim.request.requestId, claim.token, "upstream 529: overloaded", { retryable: true });
    else if (i === 3) tracker.fail(claim.request.requestId, claim.token, "schema mismatch", { retryable: false });
    else if (i < 5) tracker.complete(claim.request.requestId, claim.token, output(i));
    // The last claim is left running, with its heartbeat.
  }
  // A change of a field that is not searched, and one that is.
  tracker.update("r7", { fields: { model: "haiku" } });
  tracker.update("r6", { fields: { prompt: "Fix the tokenizer instead" } });
  tracker.transition("r7", "failed", { reason: "cancelled by a person" });
  tracker.transition("r7", "queued", { reason: "retried by a person" });
}

describe("what a write leaves in the index", () => {
  it("is what a rebuild from the same files makes: rows, history, attempts, charts, counts and search", () => {
    const stateDir = tempStateDir();
    const words = ["ticket", "T3", "parser", "tokenizer", "socket", "overloaded", "schema", "nowhere"];
    const { tracker, reader, close } = aRecording({ stateDir });
    workTheQueue(tracker);
    const written = { shown: shown(reader, words), rows: indexRows(stateDir) };
    close();

    removeIndexFiles(path.join(stateDir, "index.db"));
    const rebuilt = aRecording({ stateDir, recover: false });
    expect(shown(rebuilt.reader, words)).toEqual(written.shown);
    expect(indexRows(stateDir)).toEqual(written.rows);
    // The answers are the queue's, not two empty ones.
    expect(written.shown.counts).toMatchObject({ queued: 3, processing: 1, completed: 3, failed: 1 });
    expect(written.shown.found.tokenizer).toEqual(["r6"]);
    expect(written.shown.found.parser).not.toContain("r6");
  });

  it("keeps the search as it was through writes that do not change the text, and follows the one that does", () => {
    const tracker = aTracker();
    tracker.create({ requestId: "r", workspace: "w", state: "queued", prompt: "rotate the signing keys" });
    const claim = tracker.claimNext()!;
    tracker.heartbeat("r", claim.token);
    tracker.update("r", { fields: { model: "sonnet", tokens: 12 } });
    expect(tracker.list({ text: "signing" }).items.map((item) => item.requestId)).toEqual(["r"]);
    tracker.complete("r", claim.token, { output: "keys rotated on every host" });
    expect(tracker.list({ text: "signing rotated" }).items.map((item) => item.requestId)).toEqual(["r"]);
    expect(tracker.list({ text: "nothing" }).items).toEqual([]);
  });

  it("keeps a heartbeat newer than the file's through a write of the same claim, and drops it with the claim", () => {
    let now = 1_000_000;
    const { tracker, reader } = aRecording({ now: () => now });
    tracker.create({ requestId: "r", workspace: "w", state: "queued" });
    const claim = tracker.claimNext()!;
    now += 5_000;
    tracker.heartbeat("r", claim.token);
    now += 1_000;
    tracker.update("r", { fields: { model: "haiku" } });
    // The monitor reads the last sign of life from the index: the beat, not the claim's time in the file.
    expect(reader.workers()[0]).toMatchObject({ holding: 1, heartbeatAt: 1_005_000 });
    tracker.complete("r", claim.token);
    expect(reader.workers()[0]).toMatchObject({ holding: 0, completed: 1, heartbeatAt: null });
  });
});
