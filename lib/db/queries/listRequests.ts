import { decodeCursor, encodeCursor } from "../../model/cursor";
import type { ResolvedListFilters } from "../../model/listFilters";
import type { IndexDb } from "../openIndex";
import { backfillText, searchQuery } from "../requestText";
import { statement } from "../statements";
import { filterConditions, type FilterTarget } from "../../sqlite/listFilterSql";
import type { RequestSummary, RequestPage } from "../../types";

const COLUMN = { updatedAt: "updated_at", createdAt: "created_at" } as const;

const COLUMNS = `id AS requestId, workspace, session_id AS sessionId, chat_id AS chatId, state,
  previous_state AS previousState, created_at AS createdAt, updated_at AS lastUpdatedAt,
  state_since AS stateSince, attempt, model, tokens, version`;

/** What sorts after every id or workspace that starts with `prefix`: each character they may hold sorts before "~". */
export function prefixEnd(prefix: string): string {
  return `${prefix}~`;
}

/** The list filters on the index's columns: prefixes as ranges, so the indexes serve them. */
const INDEX_FILTERS: FilterTarget = {
  workspace: "workspace",
  session: "session_id",
  created: "created_at",
  updated: "updated_at",
  startsWith: (column, prefix) => [`${column} >= ? AND ${column} < ?`, prefix, prefixEnd(prefix)],
  text: (text) => ["rowid IN (SELECT rowid FROM requests_text WHERE requests_text MATCH ?)", searchQuery(text)],
  ids: (ids) => ["id IN (SELECT value FROM json_each(?))", JSON.stringify(ids)],
  callbackFailed:
    "(callback_success = 0 OR EXISTS (SELECT 1 FROM responses r WHERE r.request_id = requests.id AND r.workspace = requests.workspace AND r.callback_success = 0))",
};

/** Keyset paging over the index: cost depends on the page size, not on how deep the page is. */
export function listRequests(db: IndexDb, filters: ResolvedListFilters): RequestPage {
  // After a rebuild, a search first fills what the text index still lacks (once), so it misses nothing.
  if (filters.text !== undefined) while (backfillText(db, 20_000) > 0);
  const { where, params, add } = filterConditions(filters, INDEX_FILTERS);

  const column = COLUMN[filters.sort];
  const direction = filters.order === "desc" ? "DESC" : "ASC";
  if (filters.cursor !== undefined) {
    const after = decodeCursor(filters.cursor, filters.sort, filters.order);
    add(`(${column}, id) ${filters.order === "desc" ? "<" : ">"} (?, ?)`, after.value, after.id);
  }
  const order = `ORDER BY ${column} ${direction}, id ${direction}`;
  const states = [...new Set(filters.states ?? [])];
  const limit = filters.limit + 1;

  let sql: string;
  let args: unknown[];
  if (states.length > 1 && filters.sort === "updatedAt") {
    // One ordered walk of the (state, updated_at, id) index per state, merged: a page costs
    // states x page size whatever the data, instead of sorting every matching row.
    const branch = `SELECT ${COLUMNS} FROM requests WHERE state = ?${where.length ? ` AND ${where.join(" AND ")}` : ""} ${order} LIMIT ?`;
    sql = `SELECT * FROM (${states.map(() => `SELECT * FROM (${branch})`).join(" UNION ALL ")}) ORDER BY lastUpdatedAt ${direction}, requestId ${direction} LIMIT ?`;
    args = [...states.flatMap((state) => [state, ...params, limit]), limit];
  } else {
    const conditions = states.length ? [`state IN (${states.map(() => "?").join(", ")})`, ...where] : where;
    sql = `SELECT ${COLUMNS} FROM requests ${conditions.length ? `WHERE ${conditions.join(" AND ")}` : ""} ${order} LIMIT ?`;
    args = [...states, ...params, limit];
  }
  const rows = statement(db, sql).all(...args) as RequestSummary[];
  const more = rows.length > filters.limit;
  const items = more ? rows.slice(0, filters.limit) : rows;
  const last = items[items.length - 1];
  return {
    items,
    nextCursor:
      more && last
        ? encodeCursor({ s: filters.sort, o: filters.order, v: filters.sort === "updatedAt" ? last.lastUpdatedAt : last.createdAt, id: last.requestId })
        : null,
  };
}
