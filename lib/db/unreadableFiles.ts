import type { FileFingerprint } from "../fs/fingerprint";
import type { IndexDb } from "./openIndex";
import { statement } from "./statements";

/** A file the index could not read, by its path relative to the state folder, as it was on disk. */
interface KnownUnreadable extends FileFingerprint {
  file: string;
  reason: string;
}

/** Record (or update) an unreadable file with its reason; `since` stays the first time it was seen. */
export function recordUnreadable(db: IndexDb, file: string, reason: string, fingerprint: FileFingerprint | null, now: number): void {
  statement(
    db,
    `INSERT INTO unreadable_files (file, reason, since, file_mtime_ms, file_size, file_ino) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(file) DO UPDATE SET reason = excluded.reason, file_mtime_ms = excluded.file_mtime_ms,
       file_size = excluded.file_size, file_ino = excluded.file_ino`,
  ).run(file, reason, now, fingerprint?.mtimeMs ?? null, fingerprint?.size ?? null, fingerprint?.ino ?? null);
}

/** The file is readable again, or gone. */
export function forgetUnreadable(db: IndexDb, file: string): void {
  statement(db, "DELETE FROM unreadable_files WHERE file = ?").run(file);
}

/** A file the index could not read, as health lists it. */
export interface UnreadableFile {
  /** Relative to the state directory, e.g. `requests/abc.json`. */
  file: string;
  reason: string;
  since: number;
}

export function listUnreadable(db: IndexDb): UnreadableFile[] {
  return statement(db, "SELECT file, reason, since FROM unreadable_files ORDER BY file").all() as UnreadableFile[];
}

export function knownUnreadable(db: IndexDb): KnownUnreadable[] {
  return statement(db, "SELECT file, reason, file_mtime_ms AS mtimeMs, file_size AS size, file_ino AS ino FROM unreadable_files").all() as KnownUnreadable[];
}
