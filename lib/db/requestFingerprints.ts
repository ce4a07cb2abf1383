import type { FileFingerprint } from "../fs/fingerprint";
import type { IndexDb } from "./openIndex";
import { statement } from "./statements";

interface IndexedFingerprint extends FileFingerprint {
  id: string;
}

/** The fingerprint of the file the index's row was read from; undefined when the request has no row. */
export function indexedFingerprint(db: IndexDb, id: string): FileFingerprint | undefined {
  return statement(db, "SELECT file_mtime_ms AS mtimeMs, file_size AS size, file_ino AS ino FROM requests WHERE id = ?").get(id) as FileFingerprint | undefined;
}

export function isIndexed(db: IndexDb, id: string): boolean {
  return statement(db, "SELECT 1 FROM requests WHERE id = ?").get(id) !== undefined;
}

/** Every row's file fingerprint: what reconciliation compares the folder's listing with. */
export function indexedFingerprints(db: IndexDb): IndexedFingerprint[] {
  return statement(db, "SELECT id, file_mtime_ms AS mtimeMs, file_size AS size, file_ino AS ino FROM requests").all() as IndexedFingerprint[];
}
