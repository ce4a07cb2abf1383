import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

const COLUMN = { workspace: "workspace", session: "session_id" } as const;

/**
 * Up to `limit` distinct workspaces (or session ids) that start with `prefix`, in order: what the
 * table's filters suggest as you type. One index seek per value, so a workspace's 100,000 requests
 * cost no more than its one.
 */
export function knownValues(db: IndexDb, field: keyof typeof COLUMN, prefix: string, limit: number): string[] {
  const column = COLUMN[field];
  const first = statement(db, `SELECT min(${column}) FROM requests WHERE ${column} >= ?`);
  const next = statement(db, `SELECT min(${column}) FROM requests WHERE ${column} > ?`);
  const values: string[] = [];
  let value = first.pluck().get(prefix) as string | null;
  while (value !== null && value.startsWith(prefix) && values.length < limit) {
    values.push(value);
    value = next.pluck().get(value) as string | null;
  }
  return values;
}
