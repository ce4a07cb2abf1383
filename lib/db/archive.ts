import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import type { RequestRecord } from "../model/requestFormat";
import { openDatabase } from "../sqlite/openDatabase";
import { fileIdentity, type FileIdentity } from "./openIndex";

export type ArchiveDb = Database.Database;

/** One archived copy of a request: an id used again (`create --id`, a gateway's own ids) has one per cleanup that took it. */
interface ArchivedCopy {
  copyId: number;
  request: RequestRecord;
}

/**
 * archive.db's schema, in `PRAGMA user_version`. 0: one row per request id, replaced when the id
 * was archived again (the first request's copy was lost). 1: one row per archived copy.
 */
const ARCHIVE_SCHEMA_VERSION = 1;

const ARCHIVE_DDL = `
  CREATE TABLE IF NOT EXISTS archived_requests (
    -- Never reused (AUTOINCREMENT), so a copy id names one copy for good.
    copy_id INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id TEXT NOT NULL,
    -- The audit entry of the cleanup that archived it (what its undo restores); null for a cleanup outside the bulk actions.
    cleanup_entry INTEGER,
    workspace TEXT NOT NULL,
    state TEXT NOT NULL,
    version INTEGER NOT NULL,
    archived_at INTEGER NOT NULL,
    doc TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS archived_by_request ON archived_requests (request_id, cleanup_entry);
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
`;

/**
 * `archive.db` keeps what exists nowhere else once a request file is cleaned up. Unlike the index
 * it is not rebuildable, so every commit is fully synced before the file it replaces is deleted,
 * and an older schema is migrated in place, never dropped.
 */
export function openArchive(file: string): ArchiveDb {
  const db = openDatabase(file);
  opened.set(db, { file, identity: fileIdentity(file) });
  db.pragma("busy_timeout = 10000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  if ((db.pragma("user_version", { simple: true }) as number) >= ARCHIVE_SCHEMA_VERSION) return db;
  // IMMEDIATE, and the version asked again under it: two processes opening an old archive at once migrate it once.
  db.transaction(() => {
    if ((db.pragma("user_version", { simple: true }) as number) >= ARCHIVE_SCHEMA_VERSION) return;
    const legacy = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'archived_requests'").get() !== undefined;
    if (legacy) {
      db.exec("ALTER TABLE archived_requests RENAME TO archived_requests_v0; DROP INDEX IF EXISTS archived_by_time;");
    }
    db.exec(ARCHIVE_DDL);
    if (legacy) migrateLegacyCopies(db);
    db.pragma(`user_version = ${ARCHIVE_SCHEMA_VERSION}`);
  }).immediate();
  return db;
}

/**
 * Version 0 kept one copy per id: the one the latest cleanup of that id archived. It is tagged
 * with the bulk cleanup that listed the id and was running when the copy was archived, so that
 * cleanup's undo still finds it; a copy no such entry claims (a `reqwatch cleanup`) stays untagged.
 */
function migrateLegacyCopies(db: ArchiveDb): void {
  // The audit log's columns as its version left them (in_flight came later; an archive may have none).
  const audit = db.prepare("SELECT name FROM pragma_table_info('audit_log')").pluck().all() as string[];
  const listed = (column: string) => (audit.includes(column) ? [`EXISTS (SELECT 1 FROM json_each(entry.${column}) WHERE value = old.id)`] : []);
  const lists = [...listed("changed_ids"), ...listed("in_flight")];
  const entry = lists.length
    ? `(SELECT entry.id FROM audit_log entry
        WHERE entry.kind = 'cleanup' AND entry.started_at <= old.archived_at AND (entry.finished_at IS NULL OR old.archived_at <= entry.finished_at)
          AND (${lists.join(" OR ")})
        ORDER BY entry.id DESC LIMIT 1)`
    : "NULL";
  db.exec(`
    INSERT INTO archived_requests (request_id, cleanup_entry, workspace, state, version, archived_at, doc)
    SELECT old.id, ${entry}, old.workspace, old.state, old.version, old.archived_at, old.doc
    FROM archived_requests_v0 old ORDER BY old.archived_at, old.id;
    DROP TABLE archived_requests_v0;
  `);
}

/** Which file each open archive connection is, at its path. */
const opened = new WeakMap<ArchiveDb, { file: string; identity: FileIdentity | null }>();

/**
 * Whether archive.db at the path `db` was opened from is no longer the file `db` holds (deleted, or
 * replaced by another): SQLite goes on writing to a deleted file, where nothing will find it. A stat.
 * A state folder removed whole is not an archive replaced: the open one serves until the folder is
 * back (the index's guard says it is missing), as there is nowhere to make a new one.
 */
export function archiveReplaced(db: ArchiveDb): boolean {
  const at = opened.get(db);
  if (!at) return false;
  const now = fileIdentity(at.file);
  if (!now) return fs.existsSync(path.dirname(at.file));
  return !at.identity || now.dev !== at.identity.dev || now.ino !== at.identity.ino;
}

/**
 * Which of these archived copies archive.db on disk holds now, read by a connection of its own (a
 * new one reads the file, not what `db` caches; SQLite's, so closing it drops no lock `db` holds).
 * None when the file is gone, replaced by one that lacks them, or damaged: a request file is
 * deleted only once its copy is found here.
 */
export function copiesOnDisk(db: ArchiveDb, copies: readonly { copyId: number; requestId: string }[]): Set<number> {
  const found = new Set<number>();
  const at = opened.get(db);
  if (!at || !copies.length || archiveReplaced(db)) return found;
  let reader: Database.Database | undefined;
  try {
    reader = openDatabase(at.file, { fileMustExist: true });
    reader.pragma("busy_timeout = 10000");
    const held = reader.prepare("SELECT 1 FROM archived_requests WHERE copy_id = ? AND request_id = ?").pluck();
    for (const { copyId, requestId } of copies) if (held.get(copyId, requestId) !== undefined) found.add(copyId);
  } catch {
    // Gone, not a database, or damaged: nothing is found there.
    found.clear();
  } finally {
    reader?.close();
  }
  return found;
}

/** Archive a copy of each request, in one fully synced commit; returns each one's copy id, in order. */
export function archiveRequests(db: ArchiveDb, requests: RequestRecord[], now: number, cleanupEntry: number | null = null): number[] {
  const insert = db.prepare(
    "INSERT INTO archived_requests (request_id, cleanup_entry, workspace, state, version, archived_at, doc) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  return db.transaction(() =>
    requests.map((request) =>
      Number(insert.run(request.requestId, cleanupEntry, request.workspace, request.state, request.version ?? 0, now, JSON.stringify(request)).lastInsertRowid),
    ),
  )();
}

/**
 * The archived copy of `requestId` that the cleanup audited as `cleanupEntry` archived; without
 * an entry, the newest copy (the one the latest cleanup of that id took).
 */
export function getArchived(db: ArchiveDb, requestId: string, cleanupEntry?: number): ArchivedCopy | null {
  const row = (
    cleanupEntry === undefined
      ? db.prepare("SELECT copy_id, doc FROM archived_requests WHERE request_id = ? ORDER BY copy_id DESC LIMIT 1").get(requestId)
      : db
          .prepare("SELECT copy_id, doc FROM archived_requests WHERE request_id = ? AND cleanup_entry = ? ORDER BY copy_id DESC LIMIT 1")
          .get(requestId, cleanupEntry)
  ) as { copy_id: number; doc: string } | undefined;
  return row ? { copyId: row.copy_id, request: JSON.parse(row.doc) as RequestRecord } : null;
}

export function removeArchived(db: ArchiveDb, copyId: number): void {
  db.prepare("DELETE FROM archived_requests WHERE copy_id = ?").run(copyId);
}

/** Drop up to `limit` archived copies archived before `before`, oldest first; returns how many went. */
export function pruneArchived(db: ArchiveDb, before: number, limit: number): number {
  return db
    .prepare("DELETE FROM archived_requests WHERE copy_id IN (SELECT copy_id FROM archived_requests WHERE archived_at < ? ORDER BY archived_at LIMIT ?)")
    .run(before, limit).changes;
}
