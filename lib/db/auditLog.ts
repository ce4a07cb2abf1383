import type { ArchiveDb } from "./archive";
import { ReqwatchError } from "../model/errors";
import type { SkipSummary } from "../model/skipSummary";

/** source-retry and source-delete: on another program's queue (lib/sources/sourceActions.ts), each one transaction there. */
type ActionKind = "retry" | "cancel" | "cleanup" | "undo" | "pause" | "resume" | "source-retry" | "source-delete";

export type { SkipSummary };

/** One action taken from the dashboard, as the audit page shows it. */
export interface AuditEntry {
  id: number;
  kind: ActionKind;
  /** Who asked (the dashboard, the CLI). */
  by: string;
  startedAt: number;
  finishedAt: number | null;
  /** running: under way (or the process died during it: see `interrupted`); done; failed: stopped by an error. */
  status: "running" | "done" | "failed";
  /** What it was asked to act on, in words, and the input itself (ids, filter, age and states). */
  summary: string;
  target: unknown;
  matched: number;
  changed: number;
  skipped: number;
  skipReasons: SkipSummary[];
  /** The ids changed (for a cleanup, the ids archived: what undo restores). */
  changedIds: string[];
  error: string | null;
  /** For a cleanup: when it was undone and by which entry. For an undo: the entry it undid. */
  undoneAt: number | null;
  undoneBy: number | null;
  undoes: number | null;
  /**
   * The chunk being worked on, written before the chunk starts (with the progress before it): after
   * a crash, these are the only requests whose fate the entry does not already say.
   */
  inFlight: string[];
}

/**
 * The audit log lives in archive.db: like the archive it is not rebuildable from the request
 * files, and it is fully synced. An entry is written before the action starts and completed after,
 * so an action cut short by a crash shows as `running` from a process that is gone.
 */
export function ensureAuditTable(db: ArchiveDb): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS audit_log (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      kind TEXT NOT NULL,
      by TEXT NOT NULL,
      pid INTEGER NOT NULL,
      started_at INTEGER NOT NULL,
      finished_at INTEGER,
      status TEXT NOT NULL,
      summary TEXT NOT NULL,
      target TEXT NOT NULL,
      matched INTEGER NOT NULL DEFAULT 0,
      changed INTEGER NOT NULL DEFAULT 0,
      skipped INTEGER NOT NULL DEFAULT 0,
      skip_reasons TEXT NOT NULL DEFAULT '[]',
      changed_ids TEXT NOT NULL DEFAULT '[]',
      error TEXT,
      undone_at INTEGER,
      undone_by INTEGER,
      undoes INTEGER,
      in_flight TEXT NOT NULL DEFAULT '[]'
    );
  `);
  // Archives written before the write-ahead of chunks existed.
  const columns = db.prepare("SELECT name FROM pragma_table_info('audit_log')").pluck().all() as string[];
  if (!columns.includes("in_flight")) db.exec("ALTER TABLE audit_log ADD COLUMN in_flight TEXT NOT NULL DEFAULT '[]'");
}

interface Row {
  id: number;
  kind: ActionKind;
  by: string;
  pid: number;
  started_at: number;
  finished_at: number | null;
  status: AuditEntry["status"];
  summary: string;
  target: string;
  matched: number;
  changed: number;
  skipped: number;
  skip_reasons: string;
  changed_ids: string;
  error: string | null;
  undone_at: number | null;
  undone_by: number | null;
  undoes: number | null;
  in_flight: string;
}

function toEntry(row: Row): AuditEntry {
  return {
    id: row.id,
    kind: row.kind,
    by: row.by,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    status: row.status,
    summary: row.summary,
    target: JSON.parse(row.target) as unknown,
    matched: row.matched,
    changed: row.changed,
    skipped: row.skipped,
    skipReasons: JSON.parse(row.skip_reasons) as SkipSummary[],
    changedIds: JSON.parse(row.changed_ids) as string[],
    error: row.error,
    undoneAt: row.undone_at,
    undoneBy: row.undone_by,
    undoes: row.undoes,
    inFlight: JSON.parse(row.in_flight) as string[],
  };
}

export function startEntry(
  db: ArchiveDb,
  entry: { kind: ActionKind; by: string; summary: string; target: unknown; matched: number; undoes?: number; at: number },
): number {
  const { lastInsertRowid } = db
    .prepare("INSERT INTO audit_log (kind, by, pid, started_at, status, summary, target, matched, undoes) VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?)")
    .run(entry.kind, entry.by, process.pid, entry.at, entry.summary, JSON.stringify(entry.target), entry.matched, entry.undoes ?? null);
  return Number(lastInsertRowid);
}

/** An action done in one step (a pause, a resume): written finished. */
export function recordEntry(db: ArchiveDb, entry: { kind: ActionKind; by: string; summary: string; target: unknown; at: number }): number {
  const { lastInsertRowid } = db
    .prepare("INSERT INTO audit_log (kind, by, pid, started_at, finished_at, status, summary, target) VALUES (?, ?, ?, ?, ?, 'done', ?, ?)")
    .run(entry.kind, entry.by, process.pid, entry.at, entry.at, entry.summary, JSON.stringify(entry.target));
  return Number(lastInsertRowid);
}

export interface EntryProgress {
  changed: number;
  skipped: number;
  skipReasons: SkipSummary[];
  changedIds: string[];
}

/**
 * Progress so far and the chunk about to be worked on (`inFlight`), written (fully synced) before
 * each chunk: a crash leaves the entry exact up to one chunk, and naming that chunk.
 */
export function updateEntry(
  db: ArchiveDb,
  id: number,
  progress: EntryProgress,
  finish?: { status: "done" | "failed"; at: number; error?: string },
  inFlight: readonly string[] = [],
): void {
  db.prepare(
    `UPDATE audit_log SET changed = ?, skipped = ?, skip_reasons = ?, changed_ids = ?, in_flight = ?,
       status = coalesce(?, status), finished_at = coalesce(?, finished_at), error = coalesce(?, error) WHERE id = ?`,
  ).run(
    progress.changed,
    progress.skipped,
    JSON.stringify(progress.skipReasons),
    JSON.stringify(progress.changedIds),
    JSON.stringify(inFlight),
    finish?.status ?? null,
    finish?.at ?? null,
    finish?.error ?? null,
    id,
  );
}

export function markUndone(db: ArchiveDb, id: number, by: number, at: number): void {
  db.prepare("UPDATE audit_log SET undone_at = ?, undone_by = ? WHERE id = ?").run(at, by, id);
}

export function getEntry(db: ArchiveDb, id: number): AuditEntry {
  const row = db.prepare("SELECT * FROM audit_log WHERE id = ?").get(id) as Row | undefined;
  if (!row) throw new ReqwatchError("NOT_FOUND", `Audit entry ${id} does not exist.`);
  return toEntry(row);
}

/** Newest first. */
export function listEntries(db: ArchiveDb, limit = 100): AuditEntry[] {
  return (db.prepare("SELECT * FROM audit_log ORDER BY id DESC LIMIT ?").all(limit) as Row[]).map(toEntry);
}

/** Entries left `running` by a process that is gone: the action was cut short. */
export function interruptedEntries(db: ArchiveDb, isAlive: (pid: number) => boolean): AuditEntry[] {
  const rows = db.prepare("SELECT * FROM audit_log WHERE status = 'running'").all() as Row[];
  return rows.filter((row) => !isAlive(row.pid)).map(toEntry);
}

/** Drop finished entries that ended before `before` (the archive's retention); returns how many went. */
export function pruneEntries(db: ArchiveDb, before: number): number {
  return db.prepare("DELETE FROM audit_log WHERE status != 'running' AND finished_at < ?").run(before).changes;
}
