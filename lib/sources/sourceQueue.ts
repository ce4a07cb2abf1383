import { ReqwatchError } from "../model/errors";
import type { ResolvedListFilters } from "../model/listFilters";
import type { State } from "../model/states";
import { sourceReadError, type SourceDb } from "../sqlite/openSourceDb";
import { timeOf } from "../model/storedValues";
import type { SourceMessage, StuckReason } from "./sourceMessage";
import { filterConditions, type FilterTarget } from "../sqlite/listFilterSql";

export type Row = Record<string, unknown>;

/**
 * Another program's queue table as SQL reqwatch can ask, whatever its shape: claude-mem's
 * `pending_messages` (lib/sources/claudeMem.ts) or a mapped job table (lib/sources/sqliteTable.ts).
 * Each describes its table once here; the reads below (a filtered page, one row) and a look's
 * (lib/sources/queueLook.ts: the counts and the stuck rows) are the same for all. Expressions may
 * call the connection's reqwatch_name and reqwatch_time (lib/sqlite/openSourceDb.ts), so a filter
 * matches what a row shows.
 */
export interface SourceQueue {
  kind: "claude-mem" | "sqlite" | "otel";
  file: string;
  table: string;
  /** FROM: the table as `t`, with any joins. Every expression below names the table's columns as `t.<column>`. */
  from: string;
  /** The columns toMessage reads; each read adds `_id`, `_workspace` and `_session` (columns below). */
  select: string;
  /** The id column: rows are listed in its order, newest (highest) first. */
  id: string;
  status: string;
  /** Each status value the table holds, and the state it means; any other value is shown as failed. */
  statusValues: Readonly<Record<string, State>>;
  /** When the row was created, in ms (an expression). */
  created: string;
  /** The time columns whose newest value says when the table was last written. */
  times: readonly string[];
  /** The workspace a row shows (an expression). */
  workspace: string;
  /** The session id a row shows (an expression), if the table has one. */
  session: string | null;
  /** What a search looks in. */
  text: readonly string[];
  /** The id value of the row a request id names (null: not one of this source's). */
  rowId(requestId: string): string | null;
  /** The request id a row shows, from its `_id` and `facts`. */
  requestId(row: Row): string;
  /** The columns `stuck` reads, and never the text: what a look keeps of each live row (lib/sources/queueLook.ts). */
  facts: string;
  /** Status values whose rows' facts do not change while they keep them: a look reads such a row once, not at every write. */
  settled: readonly string[];
  /** Why a row is stuck by its owner's rules; the row holds at least `facts`. toMessage says the same. */
  stuck(row: Row, now: number, lastWriteAt: number | null): StuckReason;
  toMessage(row: Row, now: number, lastWriteAt: number | null): SourceMessage;
  /** The rows are reqwatch's own record of what it saw (received telemetry, a worker's queue), not its owner's table. */
  keptByReqwatch?: boolean;
  /** What one row's own page shows besides: its steps and parts, where the source keeps them. */
  details?(db: SourceDb, rowId: string): Pick<SourceMessage, "steps" | "parts">;
}

/** What every read selects: the queue's columns, and the id, workspace and session as a row shows them. */
function columns(queue: SourceQueue): string {
  return `${queue.id} AS _id, ${queue.workspace} AS _workspace, ${queue.session ?? "NULL"} AS _session, ${queue.select}`;
}

/** The live states: the rows that can be stuck. */
export const LIVE: readonly State[] = ["created", "queued", "processing"];

/** The state a status value means; a value the table's values do not know is shown as failed. */
export function stateOf(queue: SourceQueue, value: unknown): State {
  const key = value === null ? "" : String(value);
  return Object.hasOwn(queue.statusValues, key) ? queue.statusValues[key]! : "failed";
}

export function valuesFor(queue: SourceQueue, states: readonly State[]): string[] {
  return Object.entries(queue.statusValues)
    .filter(([, state]) => states.includes(state))
    .map(([value]) => value);
}

/** A WHERE condition for rows in `states`: a status the table's values do not know is shown as failed, so "failed" holds it too. */
function stateCondition(queue: SourceQueue, states: readonly State[]): [string, unknown[]] {
  const values = valuesFor(queue, states);
  const parts: string[] = [];
  const params: unknown[] = [...values];
  if (values.length) parts.push(`${queue.status} IN (${values.map(() => "?").join(", ")})`);
  if (states.includes("failed")) {
    const known = Object.keys(queue.statusValues);
    parts.push(`(${queue.status} IS NULL OR ${queue.status} NOT IN (${known.map(() => "?").join(", ")}))`);
    params.push(...known);
  }
  return [parts.length ? `(${parts.join(" OR ")})` : "0", params];
}

/** Run a read, with its failure said as a source's error (locked, damaged). */
export function reading<T>(queue: SourceQueue, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ReqwatchError) throw error;
    throw sourceReadError(error, queue.file, `${queue.kind} source`);
  }
}

/** The newest time in the table (when it was last written, as far as its times tell), or null when it is empty. */
export function lastWriteOf(db: SourceDb, queue: SourceQueue): number | null {
  return reading(queue, () => {
    // The native max of each column (an index can serve it), read as a time after.
    const latest = (
      db
        .prepare(`SELECT ${queue.times.map((column) => `max(${column})`).join(", ")} FROM "${queue.table}" t`)
        .raw()
        .get() as unknown[]
    )
      .map(timeOf)
      .filter((t): t is number => t !== undefined);
    return latest.length ? Math.max(...latest) : null;
  });
}

/** The rows of these ids (as `_id` gives them), newest first, at most `limit`. */
export function readRows(
  db: SourceDb,
  queue: SourceQueue,
  rowIds: readonly unknown[],
  now: number,
  lastWriteAt: number | null,
  limit: number,
): SourceMessage[] {
  return reading(queue, () =>
    (
      db
        .prepare(`SELECT ${columns(queue)} FROM ${queue.from} WHERE ${queue.id} IN (SELECT value FROM json_each(?)) ORDER BY ${queue.id} DESC LIMIT ?`)
        .all(JSON.stringify(rowIds), limit) as Row[]
    ).map((row) => queue.toMessage(row, now, lastWriteAt)),
  );
}

/** The newest `limit` rows. */
export function readNewest(db: SourceDb, queue: SourceQueue, now: number, lastWriteAt: number | null, limit: number): SourceMessage[] {
  return reading(queue, () =>
    (db.prepare(`SELECT ${columns(queue)} FROM ${queue.from} ORDER BY ${queue.id} DESC LIMIT ?`).all(limit) as Row[]).map((row) =>
      queue.toMessage(row, now, lastWriteAt),
    ),
  );
}

/** One row by the request id it shows, or null. */
export function readOne(db: SourceDb, queue: SourceQueue, requestId: string, now: number, lastWriteAt: number | null): SourceMessage | null {
  const rowId = queue.rowId(requestId);
  if (rowId === null) return null;
  return reading(queue, () => {
    const row = db.prepare(`SELECT ${columns(queue)} FROM ${queue.from} WHERE ${queue.id} = ?`).get(rowId) as Row | undefined;
    if (!row) return null;
    // Every column of the row, as its owner stores it (not only those reqwatch maps).
    const stored = db.prepare(`SELECT t.* FROM "${queue.table}" t WHERE ${queue.id} = ?`).get(rowId) as Row;
    return { ...queue.toMessage(row, now, lastWriteAt), stored, ...(queue.keptByReqwatch && { keptByReqwatch: true }), ...queue.details?.(db, rowId) };
  });
}

export interface SourcePage {
  items: SourceMessage[];
  nextCursor: string | null;
}

/** A source's page cursor: the last id shown, for this source and order (ids may be numbers or text, so it keeps the type). */
function encodeSourceCursor(source: string, order: string, id: unknown): string {
  return Buffer.from(JSON.stringify({ source, o: order, id })).toString("base64url");
}

function decodeSourceCursor(cursor: string, source: string, order: string): number | string {
  let payload: { source?: unknown; o?: unknown; id?: unknown };
  try {
    payload = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as typeof payload;
  } catch {
    throw new ReqwatchError("BAD_INPUT", "Invalid cursor: it was not made by reqwatch.");
  }
  if (payload.source !== source || payload.o !== order) throw new ReqwatchError("BAD_INPUT", "Invalid cursor: it belongs to another source or order.");
  if (typeof payload.id !== "number" && typeof payload.id !== "string") throw new ReqwatchError("BAD_INPUT", "Invalid cursor: it was not made by reqwatch.");
  return payload.id;
}

const likeWord = (word: string) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The list filters on a queue's expressions: a source has no update time, and records no callback deliveries. */
function sourceFilters(queue: SourceQueue): FilterTarget {
  return {
    workspace: queue.workspace,
    session: queue.session,
    created: queue.created,
    updated: null,
    startsWith: (expression, prefix) => [`substr(${expression}, 1, ?) = ?`, prefix.length, prefix],
    // Each word a substring of one of the text columns.
    text: (text) => {
      const words = text.split(/\s+/).filter(Boolean);
      if (!words.length) return ["1"];
      const anyColumn = `(${queue.text.map((column) => `${column} LIKE ? ESCAPE '\\'`).join(" OR ") || "0"})`;
      return [words.map(() => anyColumn).join(" AND "), ...words.flatMap((word) => queue.text.map(() => likeWord(word)))];
    },
    ids: (ids) => [
      `${queue.id} IN (SELECT value FROM json_each(?))`,
      JSON.stringify(ids.map((id) => queue.rowId(id)).filter((id): id is string => id !== null)),
    ],
    callbackFailed: "0",
  };
}

/**
 * One page of the table for the requests page's filters, in id order (a source has no update
 * time to sort by). The filters mean what they mean for the folder's requests: the workspace and
 * session a row shows, the states it maps to, its creation time, words in its text (a substring,
 * in any case for ASCII), and `ids` (the stuck ones) by request id.
 */
export function readPage(db: SourceDb, queue: SourceQueue, source: string, filters: ResolvedListFilters, now: number, lastWriteAt: number | null): SourcePage {
  const { where, params, add } = filterConditions(filters, sourceFilters(queue));
  if (filters.states?.length) add(...stateCondition(queue, filters.states));
  const descending = filters.order === "desc";
  if (filters.cursor !== undefined) add(`${queue.id} ${descending ? "<" : ">"} ?`, decodeSourceCursor(filters.cursor, source, filters.order));
  return reading(queue, () => {
    const sql = `SELECT ${columns(queue)} FROM ${queue.from}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ${queue.id} ${descending ? "DESC" : "ASC"} LIMIT ?`;
    const rows = db.prepare(sql).all(...params, filters.limit + 1) as Row[];
    const more = rows.length > filters.limit;
    const shown = more ? rows.slice(0, filters.limit) : rows;
    return {
      items: shown.map((row) => queue.toMessage(row, now, lastWriteAt)),
      nextCursor: more ? encodeSourceCursor(source, filters.order, shown.at(-1)!._id) : null,
    };
  });
}
