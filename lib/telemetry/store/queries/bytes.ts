import type Database from "better-sqlite3";

/** A store's size on disk: its pages in use. */
export function storeBytes(db: Database.Database): number {
  const pages = db.pragma("page_count", { simple: true }) as number;
  const free = db.pragma("freelist_count", { simple: true }) as number;
  const size = db.pragma("page_size", { simple: true }) as number;
  return (pages - free) * size;
}
