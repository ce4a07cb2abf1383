import type Database from "better-sqlite3";
import type { Unmapped } from "../../mapping/changes";

export interface UnmappedRow extends Unmapped {
  count: number;
  lastAt: number;
}

/** How many unmapped names the Health page lists at a time. */
export const UNMAPPED_PAGE = 50;

/** What a dialect knew and left out on purpose: how many names and records, and when the last came. */
interface KnownRow {
  dialect: string;
  names: number;
  count: number;
  lastAt: number;
}

/** One page of what mapped to no lifecycle and no dialect knows, and how many names there are in all; beside it, what the dialects knew and left out. */
export interface UnmappedPage {
  rows: UnmappedRow[];
  total: number;
  offset: number;
  limit: number;
  known: KnownRow[];
}

/** What mapped to no lifecycle and no dialect knows, by service and name, the most first: `limit` of them from `offset` (every one with a limit of -1), and how many there are. */
export function storeUnmapped(db: Database.Database, page: { offset?: number; limit?: number } = {}): UnmappedPage {
  const offset = Math.max(0, Math.floor(page.offset ?? 0));
  const limit = page.limit ?? UNMAPPED_PAGE;
  const rows = db
    .prepare("SELECT service, signal, name, count, last_at AS lastAt FROM unmapped ORDER BY count DESC, service, signal, name LIMIT ? OFFSET ?")
    .all(limit, offset) as UnmappedRow[];
  const total = db.prepare("SELECT count(*) FROM unmapped").pluck().get() as number;
  const known = db
    .prepare(
      "SELECT known_by AS dialect, count(*) AS names, sum(count) AS count, max(last_at) AS lastAt FROM unshown GROUP BY known_by ORDER BY count DESC, known_by",
    )
    .all() as KnownRow[];
  return { rows, total, offset, limit, known };
}
