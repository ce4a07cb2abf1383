import type Database from "better-sqlite3";
import type { Part } from "../../mapping/changes";

/** A step as stored: its detail still JSON, and the error it told of. */
interface StoredStep {
  key: string;
  at: number;
  startAt: number | null;
  parentKey: string | null;
  partKey: string | null;
  name: string;
  summary: string;
  detail: string;
  error: unknown;
}

/** A part as stored: its fields still JSON. */
interface StoredPart {
  kind: Part["kind"];
  id: string;
  at: number;
  fields: string;
}

/** A lifecycle's steps, oldest first (each with the error it told of), and its model calls and tool uses, each once. */
export function lifecycleDetails(db: Database.Database, rowId: string): { steps: StoredStep[]; parts: StoredPart[] } {
  const steps = db
    .prepare(
      "SELECT step_key AS key, at, start_at AS startAt, parent_key AS parentKey, part_key AS partKey, name, summary, detail, json_extract(facts, '$.error') AS error FROM steps WHERE seq = ? ORDER BY at, step_key",
    )
    .all(rowId) as StoredStep[];
  const parts = db.prepare("SELECT kind, id, at, fields FROM parts WHERE seq = ? ORDER BY at, kind, id").all(rowId) as StoredPart[];
  return { steps, parts };
}
