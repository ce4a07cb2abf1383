import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { aBigClaudeMemQueue, addMessage, addMessages, aPendingBacklog, createClaudeMemDb, type Generation } from "../helpers/claudeMemDb";
import { aDeadPid } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { claudeMemQueue, claudeMemShape } from "../../lib/sources/claudeMem";
import { LiveSource } from "../../lib/sources/liveSource";
import { openSourceDb } from "../../lib/sqlite/openSourceDb";
import { emptyCounts } from "../../lib/sources/sourceMessage";
import { lastWriteOf, readNewest } from "../../lib/sources/sourceQueue";
import { sourceView } from "../../lib/views/sourceView";

// A big claude-mem queue, with a clock of the test's own.
const T0 = 1_800_000_000_000;
const MIN = 60_000;

/** Bytes this process read through system calls (Linux's rchar): what SQLite read of the database, from the OS's cache or the disk. */
function bytesRead(): number {
  return Number(/^rchar: (\d+)$/m.exec(fs.readFileSync("/proc/self/io", "utf8"))![1]);
}

function aClaudeMemFile(generation: Generation): { file: string; db: Database.Database } {
  const file = path.join(tempParent(), "claude-mem.db");
  return { file, db: createClaudeMemDb(file, generation) };
}

/** A source as the dashboard keeps it, its first look done (a big table is read in slices). */
function aLiveSource(file: string, now: number): LiveSource {
  const source = new LiveSource("claude-mem", { kind: "claude-mem", file });
  source.refresh(now);
  while (source.status().counting) source.refresh(now);
  return source;
}

/** What reading every row with all its text said before: each row mapped, its state counted and its stuck rule applied. */
function fullRead(file: string, now: number) {
  const db = openSourceDb(file, "test");
  try {
    const queue = claudeMemQueue(claudeMemShape(db, file), file);
    const lastWriteAt = lastWriteOf(db, queue);
    const rows = readNewest(db, queue, now, lastWriteAt, -1);
    const counts = emptyCounts();
    for (const row of rows) counts[row.request.state]++;
    const stuck = rows.filter((row) => row.stuck !== null).map((row) => [row.request.requestId, row.stuck]);
    return { counts, total: rows.length, lastWriteAt, stuck: stuck.sort() };
  } finally {
    db.close();
  }
}

/** What the dashboard's source says at `now` (after its look), in the same terms. */
function looked(source: LiveSource, now: number) {
  source.refresh(now);
  while (source.status().counting) source.refresh(now);
  const { counts, total, lastWriteAt } = source.status();
  return {
    counts,
    total,
    lastWriteAt,
    stuck: source
      .stuck()
      .map((row) => [row.requestId, row.reason()])
      .sort(),
  };
}

/** What `reqwatch source` says, in the same terms. */
function inspected(file: string, now: number) {
  const view = sourceView({ kind: "claude-mem", file }, { limit: 5 }, now);
  return { counts: view.counts, total: view.total, lastWriteAt: view.source.lastWriteAt, stuck: view.stuck };
}

const ids = (db: Database.Database, where: string, limit: number) =>
  db.prepare(`SELECT id FROM pending_messages WHERE ${where} ORDER BY id LIMIT ?`).pluck().all(limit) as number[];
const idList = (list: readonly number[]) => `(${list.join(", ")})`;

describe("a big claude-mem queue", () => {
  it("a look reads what the owner wrote since the last one, not every message's text again", () => {
    const { file, db } = aClaudeMemFile("g6");
    addMessages(db, aPendingBacklog(1000, T0, 10_000));
    const size = fs.statSync(file).size + (fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    const source = aLiveSource(file, T0);
    const readBy = (look: () => void) => {
      const before = bytesRead();
      look();
      return bytesRead() - before;
    };

    // Five seconds on, nothing written: the stuck rule is applied again at the new time, and nothing read.
    expect(readBy(() => source.refresh(T0 + 5000))).toBeLessThan(size / 20);
    expect(source.status()).toMatchObject({ total: 1000, stuck: fullRead(file, T0 + 5000).stuck.length, counting: false });

    // The owner claims the oldest message and another arrives: the look reads those two.
    const [oldest] = ids(db, "status = 'pending'", 1);
    db.prepare("UPDATE pending_messages SET status = 'processing', started_processing_at_epoch = ?, worker_pid = ? WHERE id = ?").run(
      T0 + MIN,
      process.pid,
      oldest,
    );
    addMessage(db, { status: "pending", createdAt: T0 + MIN, input: "x".repeat(10_000), response: "y".repeat(10_000) });
    expect(readBy(() => source.refresh(T0 + MIN))).toBeLessThan(size / 20);
    expect(source.status()).toMatchObject({ total: 1001, stuck: fullRead(file, T0 + MIN).stuck.length, counts: { queued: 1000, processing: 1 } });
    source.close();
    db.close();
  });

  it("counts by state and finds the same stuck messages as reading every message did, as the clock moves and the owner writes", () => {
    const { file, db } = aClaudeMemFile("g6");
    const dead = aDeadPid();
    addMessages(db, aBigClaudeMemQueue(3000, T0, { dead }));
    const source = aLiveSource(file, T0);
    const agree = (now: number) => {
      const expected = fullRead(file, now);
      expect(looked(source, now)).toEqual(expected);
      expect(inspected(file, now)).toEqual({ ...expected, stuck: expected.stuck.length });
      return expected;
    };
    const first = agree(T0);
    expect(first.stuck.length).toBeGreaterThan(1000);
    agree(T0 + 10 * MIN);
    agree(T0 + 61 * MIN);

    // An hour on, the owner writes: claims, finishes more than a batch at once, resets one that
    // stalled and retries failed ones (claude-mem's own recovery), cleans up old processed
    // messages, and more than a slice of new ones arrive.
    const t1 = T0 + 61 * MIN;
    db.transaction(() => {
      db.prepare(
        `UPDATE pending_messages SET status = 'processing', started_processing_at_epoch = ?, worker_pid = ? WHERE id IN ${idList(ids(db, "status = 'pending'", 30))}`,
      ).run(t1, process.pid);
      db.prepare(
        `UPDATE pending_messages SET status = 'processing', started_processing_at_epoch = ?, worker_pid = ? WHERE id IN ${idList(ids(db, "status = 'pending'", 10))}`,
      ).run(t1, dead);
      db.prepare(
        `UPDATE pending_messages SET status = 'processed', completed_at_epoch = ? WHERE id IN ${idList(ids(db, "status IN ('pending', 'processing')", 600))}`,
      ).run(t1);
      db.prepare(
        `UPDATE pending_messages SET status = 'pending', started_processing_at_epoch = NULL, worker_pid = NULL WHERE id IN ${idList(ids(db, "status = 'processing'", 5))}`,
      ).run();
      db.prepare(
        `UPDATE pending_messages SET status = 'pending', retry_count = retry_count + 1, failed_at_epoch = NULL WHERE id IN ${idList(ids(db, "status = 'failed'", 5))}`,
      ).run();
      db.prepare(`DELETE FROM pending_messages WHERE id IN ${idList(ids(db, "status = 'processed' AND completed_at_epoch < " + String(T0), 50))}`).run();
    })();
    addMessages(db, aBigClaudeMemQueue(300, t1, { dead }));
    const after = agree(t1 + 1000);
    expect(after.total).toBe(3250);
    agree(t1 + 120 * MIN);
    source.close();
    db.close();
  });

  it("a table claude-mem no longer processes: its left-overs are stuck once nothing was written for an hour, as reading every message said", () => {
    const { file, db } = aClaudeMemFile("g8");
    addMessages(
      db,
      aBigClaudeMemQueue(2000, T0, { dead: aDeadPid() }).filter((message) => message.status === "pending" || message.status === "processing"),
    );
    const source = aLiveSource(file, T0);
    for (const now of [T0, T0 + 30 * MIN, T0 + 61 * MIN]) expect(looked(source, now)).toEqual(fullRead(file, now));
    expect(source.status().stuck).toBe(source.status().total);
    // Written again: no longer left over.
    addMessage(db, { status: "pending", createdAt: T0 + 62 * MIN });
    const now = T0 + 63 * MIN;
    expect(looked(source, now)).toEqual(fullRead(file, now));
    expect(source.status().stuck).toBeLessThan(source.status().total);
    source.close();
    db.close();
  });
});
