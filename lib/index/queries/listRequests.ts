import { decodeCursor, encodeCursor, type ResolvedListFilters } from "../../listFilters";
import type { State } from "../../states";
import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

/** One row of a list: the indexed columns, not the whole document (prompts and outputs stay out). */
export interface RequestSummary {
  requestId: string;
  workspace: string;
  sessionId: string | null;
  chatId: string | null;
  state: State;
  previousState: State | null;
  createdAt: number;
  lastUpdatedAt: number;
  /** When the request entered its current state. */
  stateSince: number;
  attempt: number | null;
  model: string | null;
  tokens: number | null;
  version: number;
}

export interface RequestPage {
  items: RequestSummary[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

const COLUMN = { updatedAt: "updated_at", createdAt: "created_at" } as const;

/** Keyset paging over the index: cost depends on the page size, not on how deep the page is. */
export function listRequests(db: IndexDb, filters: ResolvedListFilters): RequestPage {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (condition: string, ...values: unknown[]) => {
    where.push(condition);
    params.push(...values);
  };
  if (filters.workspace !== undefined) add("workspace = ?", filters.workspace);
  if (filters.sessionId !== undefined) add("session_id = ?", filters.sessionId);
  if (filters.states?.length) add(`state IN (${filters.states.map(() => "?").join(", ")})`, ...filters.states);
  if (filters.createdFrom !== undefined) add("created_at >= ?", filters.createdFrom);
  if (filters.createdTo !== undefined) add("created_at < ?", filters.createdTo);
  if (filters.updatedFrom !== undefined) add("updated_at >= ?", filters.updatedFrom);
  if (filters.updatedTo !== undefined) add("updated_at < ?", filters.updatedTo);

  const column = COLUMN[filters.sort];
  const direction = filters.order === "desc" ? "DESC" : "ASC";
  if (filters.cursor !== undefined) {
    const after = decodeCursor(filters.cursor, filters.sort, filters.order);
    add(`(${column}, id) ${filters.order === "desc" ? "<" : ">"} (?, ?)`, after.value, after.id);
  }

  const sql = `
    SELECT id AS requestId, workspace, session_id AS sessionId, chat_id AS chatId, state,
      previous_state AS previousState, created_at AS createdAt, updated_at AS lastUpdatedAt,
      state_since AS stateSince, attempt, model, tokens, version
    FROM requests
    ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY ${column} ${direction}, id ${direction}
    LIMIT ?`;
  const rows = statement(db, sql).all(...params, filters.limit + 1) as RequestSummary[];
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
