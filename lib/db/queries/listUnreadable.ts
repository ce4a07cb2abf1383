import type { IndexDb } from "../openIndex";

export interface UnreadableFile {
  /** Relative to the state directory, e.g. `requests/abc.json`. */
  file: string;
  reason: string;
  since: number;
}

export function listUnreadable(db: IndexDb): UnreadableFile[] {
  return db.prepare("SELECT file, reason, since FROM unreadable_files ORDER BY file").all() as UnreadableFile[];
}
