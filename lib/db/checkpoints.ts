import fs from "node:fs";
import type { IndexDb } from "./openIndex";

/** Checkpoint when the write-ahead log has grown past this (SQLite's own default, 1,000 pages of 4 KB). */
const CHECKPOINT_FROM_BYTES = 1000 * 4096;
const EVERY_MS = 250;

/**
 * Keep the index's write-ahead log short from a timer, so that no write pays for a checkpoint
 * (the log's fsync, the copy into the database, the database's fsync). PASSIVE: it never waits for
 * a writer or a reader, and does what it can. The timer does not keep the process alive.
 */
export function startCheckpoints(db: () => IndexDb, walFile: string): () => void {
  const timer = setInterval(() => {
    try {
      if ((fs.statSync(walFile, { throwIfNoEntry: false })?.size ?? 0) > CHECKPOINT_FROM_BYTES) db().pragma("wal_checkpoint(PASSIVE)");
    } catch {
      // Busy, closed or gone: the next turn, or a commit past WAL_AUTOCHECKPOINT_PAGES, does it.
    }
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
