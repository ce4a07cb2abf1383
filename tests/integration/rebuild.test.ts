import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { plantBadFiles } from "../helpers/badFiles";
import { newestIds, writeRequests } from "../helpers/requestFiles";
import { aRecording, aTracker, tempForeignDir, tempStateDir } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";

const LIB = path.resolve(__dirname, "../../dist/index.cjs");
/** The internal entry, for what the test reads beyond the library (the change feed). */
const INTERNAL = path.resolve(__dirname, "../../dist/internal.cjs");

/** Open the tracker in a process of its own, on the bundle (where the reader threads' script is), and return its open report. */
function openInChild(stateDir: string, rebuildThreads: number): { readerThreads: number; scanned: number; unreadable: unknown[] } {
  const script = `const t = require(${JSON.stringify(LIB)}).openTracker({ stateDir: ${JSON.stringify(stateDir)}, recover: false, rebuildThreads: ${rebuildThreads} }); process.stdout.write(JSON.stringify(t.openReport)); t.close();`;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }));
}

/** Everything the index holds that does not depend on when or where it was built. */
function dump(stateDir: string) {
  const db = new Database(path.join(stateDir, "index.db"), { readonly: true });
  try {
    const all = (sql: string) => db.prepare(sql).all();
    return {
      requests: all(
        "SELECT id, workspace, session_id, state, previous_state, created_at, updated_at, state_since, attempt, version, claim_token, last_claimed_at, heartbeat_at, file_size, text_sig, doc FROM requests ORDER BY id",
      ),
      attempts: all("SELECT * FROM attempts ORDER BY request_id, number"),
      transitions: all("SELECT * FROM transitions ORDER BY request_id, seq"),
      activity: all("SELECT * FROM activity ORDER BY span, bucket, workspace, metric, bin"),
      counts: all("SELECT * FROM state_counts ORDER BY state"),
      unreadable: all("SELECT file, reason FROM unreadable_files ORDER BY file"),
      triggers: all("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"),
    };
  } finally {
    db.close();
  }
}

describe("rebuilding the index from the files", () => {
  it("on reader threads, the index holds exactly what a rebuild on one thread makes, bad files reported the same", () => {
    const threaded = tempStateDir();
    writeRequests(threaded, 3000);
    plantBadFiles(threaded);
    // The same files, byte for byte (the corpus holds a FIFO and a symlink: cp -a keeps them as they are).
    const single = tempStateDir();
    fs.rmSync(single, { recursive: true });
    execFileSync("cp", ["-a", threaded, single]);
    const withThreads = openInChild(threaded, 2);
    const alone = openInChild(single, 0);
    // The threads did read: the comparison below is between two ways of reading, not one way twice.
    expect(withThreads.readerThreads).toBe(2);
    expect(alone.readerThreads).toBe(0);
    expect(withThreads.scanned).toBe(alone.scanned);
    expect(withThreads.unreadable).toEqual(alone.unreadable);
    expect(withThreads.unreadable.length).toBeGreaterThan(10);
    const a = dump(threaded);
    const b = dump(single);
    expect(a.requests).toHaveLength(3003);
    expect(a.transitions.length).toBeGreaterThan(10_000);
    expect(a).toEqual(b);
  }, 60_000);
});

/**
 * In a process of its own, on the bundle (where the rebuild thread's script is): open with the
 * rebuild in the background, start it, write while it runs (a new request, the oldest one moved on),
 * note the first page once the first batch is in, and report.
 */
function rebuildInBackgroundInChild(stateDir: string): {
  firstPage: string[];
  whileIndexing: boolean;
  indexingAtOpen: unknown;
  report: { scanned: number; readerThreads: number; unreadable: unknown[] };
  states: Record<string, string | undefined>;
  fed: string[];
} {
  const script = `
    const { tracker: t, reader } = require(${JSON.stringify(INTERNAL)}).openRoles({ stateDir: ${JSON.stringify(stateDir)}, recover: false, rebuild: "in-background", rebuildThreads: 1 });
    const indexingAtOpen = t.indexing();
    const rebuilt = t.rebuildIndex();
    t.create({ requestId: "during", workspace: "ws0", state: "queued" });
    t.transition("r00001", "processing");
    let firstPage = null;
    let whileIndexing = false;
    const look = setInterval(() => {
      const progress = t.indexing();
      if (firstPage || (progress && progress.done < 250)) return;
      firstPage = t.list({ limit: 50 }).items.map((row) => row.requestId);
      whileIndexing = progress !== null && progress.done < progress.total;
    }, 2);
    rebuilt.then((report) => {
      clearInterval(look);
      const states = Object.fromEntries(["during", "r00001"].map((id) => [id, t.get(id)?.state]));
      const fed = [...new Set(reader.changesSince(0).map((change) => change.requestId))];
      process.stdout.write(JSON.stringify({ firstPage, whileIndexing, indexingAtOpen, report, states, fed }));
      t.close();
    });`;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }));
}

describe("rebuilding the index while the process goes on (rebuild: in-background)", () => {
  it("on a thread of its own, newest files first; writes made meanwhile reach the index and the feed; at the end it is the index a rebuild at open makes", () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, 6000);
    const copy = path.join(path.dirname(stateDir), "copy");
    execFileSync("cp", ["-a", stateDir, copy]);
    const newest = newestIds(stateDir, 50);

    const { firstPage, whileIndexing, indexingAtOpen, report, states, fed } = rebuildInBackgroundInChild(stateDir);
    expect(indexingAtOpen).toMatchObject({ done: 0 });
    // The first batches hold the newest files: the first page is already the final one (after the two just written).
    expect(firstPage).toEqual(["r00001", "during", ...newest.slice(0, 48)]);
    expect(whileIndexing).toBe(true);
    expect(report).toMatchObject({ readerThreads: 1, unreadable: [] });
    expect(states).toEqual({ during: "queued", r00001: "processing" });
    expect(fed).toEqual(expect.arrayContaining(["during", "r00001"]));

    // The same as a rebuild at open of the same files (the copy, with the two writes made there too).
    const atOpen = aRecording({ stateDir: copy, recover: false });
    atOpen.tracker.create({ requestId: "during", workspace: "ws0", state: "queued" });
    atOpen.tracker.transition("r00001", "processing");
    const reopened = aRecording({ stateDir, recover: false });
    expect(reopened.tracker.openReport).toBeNull(); // complete: nothing left to rebuild
    expect(reopened.reader.countsByState()).toEqual(atOpen.reader.countsByState());
    expect(reopened.tracker.list({ limit: 200 }).items.map((row) => [row.requestId, row.state])).toEqual(
      atOpen.tracker.list({ limit: 200 }).items.map((row) => [row.requestId, row.state]),
    );
    // The charts' rollups, counted afresh at the end, hold every step of the files (the two writes fall in this hour, at different moments).
    // One cut-off for every read: an interval that ends between two reads would be in one and not the other.
    const endedBefore = Date.now() - 3_600_000;
    const rollups = (dir: string) => {
      const db = new Database(path.join(dir, "index.db"), { readonly: true });
      const rows = db.prepare("SELECT * FROM activity WHERE (bucket + 1) * span < ? ORDER BY span, bucket, workspace, metric, bin").all(endedBefore);
      db.close();
      return rows;
    };
    expect(rollups(stateDir).length).toBeGreaterThan(1000);
    expect(rollups(stateDir)).toEqual(rollups(copy));
  }, 60_000);

  it("closed before it ends: the thread stops, and the next open rebuilds the whole index", () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, 3000);
    const script = `
      const t = require(${JSON.stringify(LIB)}).openTracker({ stateDir: ${JSON.stringify(stateDir)}, recover: false, rebuild: "in-background" });
      const rebuilt = t.rebuildIndex();
      const look = setInterval(() => {
        if (t.indexing().done < 250) return;
        clearInterval(look);
        t.close();
        rebuilt.then((report) => process.stdout.write(JSON.stringify({ report })));
      }, 2);`;
    expect(JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }))).toEqual({ report: null });
    const again = aRecording({ stateDir, recover: false });
    expect(again.tracker.openReport).toMatchObject({ scanned: 3000 });
    expect(again.reader.countsByState().queued).toBe(500);
  }, 60_000);

  it("a folder another program writes is indexed in the background into reqwatch's cache, and stays byte-identical", () => {
    const stateDir = tempForeignDir();
    writeRequests(stateDir, 3000);
    const before = treeSnapshot(stateDir);
    const cacheDir = path.join(path.dirname(stateDir), "cache");
    const script = `
      const t = require(${JSON.stringify(LIB)}).openTracker({ stateDir: ${JSON.stringify(stateDir)}, cacheDir: ${JSON.stringify(cacheDir)}, recover: false, rebuild: "in-background" });
      t.rebuildIndex().then((report) => { process.stdout.write(JSON.stringify({ access: t.ownership.access, report, queued: t.list({ states: ["queued"], limit: 1000 }).items.length })); t.close(); });`;
    const { access, report, queued } = JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }));
    expect([access, report.scanned, queued]).toEqual(["observed", 3000, 500]);
    expect(treeSnapshot(stateDir)).toEqual(before);
  }, 60_000);

  it("a small folder, or the sources run directly (no thread script): rebuilt in this thread, with the same result", async () => {
    const small = tempStateDir();
    writeRequests(small, 100);
    const atOnce = aTracker({ stateDir: small, recover: false, rebuild: "in-background" });
    expect([atOnce.indexing(), atOnce.openReport?.scanned]).toEqual([null, 100]);

    const big = tempStateDir();
    writeRequests(big, 2500);
    const { tracker, reader } = aRecording({ stateDir: big, recover: false, rebuild: "in-background" });
    expect(tracker.indexing()).toMatchObject({ done: 0 });
    expect(await tracker.rebuildIndex()).toMatchObject({ scanned: 2500 });
    expect([tracker.indexing(), reader.countsByState().queued]).toEqual([null, 417]);
  }, 60_000);
});
