import type Database from "better-sqlite3";
import type { RequestRecord } from "../model/requestFormat";
import { openDatabase } from "../sqlite/openDatabase";

export type ArchiveDb = Database.Database;

/**
 * `archive.db` keeps what exists nowhere else once a request file is cleaned up. Unlike the index
 * it is not rebuildable, so every commit is fully synced before the file it replaces is deleted.
 */
export function openArchive(file: string): ArchiveDb {
  const db = openDatabase(file);
  db.pragma("busy_timeout = 10000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec(`
    CREATE TABLE IF NOT EXISTS archived_requests (
      id TEXT PRIMARY KEY,
      workspace TEXT NOT NULL,
      state TEXT NOT NULL,
      version INTEGER NOT NULL,
      archived_at INTEGER NOT NULL,
      doc TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS archived_by_time ON archived_requests (archived_at);
    -- The monitor's retention runs (lib/db/retentionRuns.ts).
    CREATE TABLE IF NOT EXISTS retention_runs (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      started_at INTEGER NOT NULL,
      finished_at INTEGER NOT NULL,
      removed INTEGER NOT NULL,
      skipped INTEGER NOT NULL,
      entry_id INTEGER,
      archive_dropped INTEGER NOT NULL,
      error TEXT
    );
  `);
  return db;
}

export function archiveRequests(db: ArchiveDb, requests: RequestRecord[], now: number): void {
  const insert = db.prepare(
    `INSERT INTO archived_requests (id, workspace, state, version, archived_at, doc) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET workspace = excluded.workspace, state = excluded.state, version = excluded.version,
       archived_at = excluded.archived_at, doc = excluded.doc`,
  );
  db.transaction(() => {
    for (const request of requests) {
      insert.run(request.requestId, request.workspace, request.state, request.version ?? 0, now, JSON.stringify(request));
    }
  })();
}

export function getArchived(db: ArchiveDb, requestId: string): RequestRecord | null {
  const doc = db.prepare("SELECT doc FROM archived_requests WHERE id = ?").pluck().get(requestId) as string | undefined;
  return doc === undefined ? null : (JSON.parse(doc) as RequestRecord);
}

export function removeArchived(db: ArchiveDb, requestId: string): void {
  db.prepare("DELETE FROM archived_requests WHERE id = ?").run(requestId);
}

/** Drop up to `limit` archived requests archived before `before`, oldest first; returns how many went. */
export function pruneArchived(db: ArchiveDb, before: number, limit: number): number {
  return db
    .prepare("DELETE FROM archived_requests WHERE id IN (SELECT id FROM archived_requests WHERE archived_at < ? ORDER BY archived_at LIMIT ?)")
    .run(before, limit).changes;
}
