import Database from "better-sqlite3";

/** Rows of a telemetry store as another process reads them: a read-only connection of its own, closed after. */
export function readRows<T>(file: string, sql: string): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}
