import type { ArchiveDb } from "./archive";
import type { RetentionRun } from "../types";

/**
 * Runs are kept in archive.db (its table is made with the archive's, in openArchive), so any process's run is seen by every
 * dashboard: those that removed something until the archive's retention drops them, the latest
 * of the others only.
 */
const EMPTY_KEPT = 20;

export function recordRetentionRun(db: ArchiveDb, run: RetentionRun): void {
  db.transaction(() => {
    db.prepare("INSERT INTO retention_runs (started_at, finished_at, removed, skipped, entry_id, archive_dropped, error) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
      run.startedAt,
      run.finishedAt,
      run.removed,
      run.skipped,
      run.entryId,
      run.archiveDropped,
      run.error,
    );
    db.prepare(
      "DELETE FROM retention_runs WHERE removed = 0 AND archive_dropped = 0 AND id NOT IN (SELECT id FROM retention_runs WHERE removed = 0 AND archive_dropped = 0 ORDER BY id DESC LIMIT ?)",
    ).run(EMPTY_KEPT);
  })();
}

interface RunRow {
  started_at: number;
  finished_at: number;
  removed: number;
  skipped: number;
  entry_id: number | null;
  archive_dropped: number;
  error: string | null;
}

/** The latest run, and the latest that removed something (null when none). */
export function latestRetentionRuns(db: ArchiveDb): { latest: RetentionRun | null; lastRemoval: RetentionRun | null } {
  const toRun = (row: RunRow | undefined): RetentionRun | null =>
    row
      ? {
          startedAt: row.started_at,
          finishedAt: row.finished_at,
          removed: row.removed,
          skipped: row.skipped,
          entryId: row.entry_id,
          archiveDropped: row.archive_dropped,
          error: row.error,
        }
      : null;
  return {
    latest: toRun(db.prepare("SELECT * FROM retention_runs ORDER BY id DESC LIMIT 1").get() as RunRow | undefined),
    lastRemoval: toRun(db.prepare("SELECT * FROM retention_runs WHERE removed > 0 ORDER BY id DESC LIMIT 1").get() as RunRow | undefined),
  };
}

/** Drop runs that finished before `before` (the archive's retention). */
export function pruneRetentionRuns(db: ArchiveDb, before: number): number {
  return db.prepare("DELETE FROM retention_runs WHERE finished_at < ?").run(before).changes;
}
