import { ReqwatchError } from "../model/errors";
import { TEXT_FIELDS, type RequestRecord, type TextField } from "../model/requestFormat";
import type { IndexDb } from "./openIndex";
import { statement } from "./statements";

/** Each text field is searchable over its first this many characters (a 10 MB output would bloat the index and slow every write of it). */
const TEXT_INDEXED_CHARS = 64 * 1024;

function fieldText(request: RequestRecord, field: TextField): string {
  const value = request[field];
  return typeof value === "string" ? value.slice(0, TEXT_INDEXED_CHARS) : "";
}

/** A cheap signature of the indexed text (lengths and a 32-bit FNV-1a), null when there is none. */
export function textSignature(request: RequestRecord): string | null {
  let hash = 0x811c9dc5;
  const lengths: number[] = [];
  for (const field of TEXT_FIELDS) {
    const text = fieldText(request, field);
    lengths.push(text.length);
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  }
  return lengths.every((n) => n === 0) ? null : `${lengths.join(".")}:${(hash >>> 0).toString(36)}`;
}

/** Bring the text index in line with a request row whose text signature went from `before` to `after`. */
export function syncRequestText(db: IndexDb, rowid: number | bigint, request: RequestRecord, before: string | null, after: string | null): void {
  if (before === after) return;
  if (before !== null) statement(db, "DELETE FROM requests_text WHERE rowid = ?").run(rowid);
  if (after !== null) {
    statement(db, "INSERT INTO requests_text (rowid, prompt, output, error) VALUES (?, ?, ?, ?)").run(
      rowid,
      fieldText(request, "prompt"),
      fieldText(request, "output"),
      fieldText(request, "error"),
    );
  }
}

/**
 * A person's search text as an FTS5 query: every word must appear, each as a word or the start of
 * one (`retry back` finds "retrying with back-off"). Quotes and operators are taken literally.
 */
export function searchQuery(text: string): string {
  const words = text.normalize("NFKC").match(/[\p{L}\p{N}_]+/gu) ?? [];
  if (!words.length) throw new ReqwatchError("BAD_INPUT", "Invalid search: it needs at least one word of letters or digits.");
  return words
    .slice(0, 16)
    .map((word) => `"${word}"*`)
    .join(" ");
}

/**
 * A rebuilt index fills its text index afterwards, not row by row during the rebuild (which would
 * slow a big one noticeably): rows up to `text_backfill_to` still need their text, from
 * `text_backfill_from` on. The server does it in small steps after start; a search does the rest
 * first, so it never misses a row.
 */
export function markTextBackfill(db: IndexDb): void {
  const last = (statement(db, "SELECT max(rowid) FROM requests").pluck().get() as number | null) ?? 0;
  const upsert = statement(db, "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  upsert.run("text_backfill_from", "0");
  upsert.run("text_backfill_to", String(last));
}

/** Fill up to `rows` rows of a pending backfill (in the caller's transaction). Returns how many rows remain, 0 when done. */
export function backfillText(db: IndexDb, rows: number): number {
  const from = statement(db, "SELECT value FROM meta WHERE key = 'text_backfill_from'").pluck().get() as string | undefined;
  const to = statement(db, "SELECT value FROM meta WHERE key = 'text_backfill_to'").pluck().get() as string | undefined;
  if (from === undefined || to === undefined) return 0;
  const end = Math.min(Number(to), Number(from) + rows);
  // REPLACE: a row written since the rebuild already has its text, and this rewrites the same text.
  statement(
    db,
    `INSERT OR REPLACE INTO requests_text (rowid, prompt, output, error)
     SELECT rowid, substr(coalesce(doc ->> '$.prompt', ''), 1, ${TEXT_INDEXED_CHARS}), substr(coalesce(doc ->> '$.output', ''), 1, ${TEXT_INDEXED_CHARS}),
       substr(coalesce(doc ->> '$.error', ''), 1, ${TEXT_INDEXED_CHARS})
     FROM requests WHERE rowid > ? AND rowid <= ? AND text_sig IS NOT NULL`,
  ).run(Number(from), end);
  if (end >= Number(to)) {
    statement(db, "DELETE FROM meta WHERE key IN ('text_backfill_from', 'text_backfill_to')").run();
    return 0;
  }
  statement(db, "UPDATE meta SET value = ? WHERE key = 'text_backfill_from'").run(String(end));
  return Number(to) - end;
}
