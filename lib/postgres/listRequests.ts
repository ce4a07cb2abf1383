import { decodeCursor, encodeCursor } from "../model/cursor";
import { ReqwatchError } from "../model/errors";
import { resolveListFilters, type ListFilters } from "../model/listFilters";
import type { RequestRecord } from "../model/requestFormat";
import { stateEnteredAt } from "../model/transition";
import type { RequestPage, RequestSummary } from "../types";
import type { PgQueryable } from "./pgDriver";

function summaryOf(record: RequestRecord): RequestSummary {
  return {
    requestId: record.requestId,
    workspace: record.workspace,
    sessionId: record.sessionId ?? null,
    chatId: record.chatId ?? null,
    state: record.state,
    previousState: record.previousState ?? null,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    stateSince: stateEnteredAt(record),
    attempt: record.attempt ?? null,
    model: record.model ?? null,
    tokens: record.tokens ?? null,
    version: record.version ?? 0,
  };
}

/** Filters the local list has that this store does not yet. */
const NOT_YET = ["text", "workspacePrefix", "sessionPrefix", "callbackFailed"] as const;

/** A page of requests as the local list gives it (the same filters, sorts and keyset cursor), from the shared store's columns. */
export async function listRequests(db: PgQueryable, filters: ListFilters): Promise<RequestPage> {
  const f = resolveListFilters(filters);
  for (const key of NOT_YET) {
    if (f[key] !== undefined) throw new ReqwatchError("BAD_INPUT", `The shared store does not filter by "${key}" yet.`);
  }
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  if (f.workspace !== undefined) where.push(`workspace = ${param(f.workspace)}`);
  if (f.states?.length) where.push(`state = ANY(${param(f.states)})`);
  if (f.sessionId !== undefined) where.push(`record->>'sessionId' = ${param(f.sessionId)}`);
  if (f.ids) where.push(`request_id = ANY(${param(f.ids)})`);
  if (f.createdFrom !== undefined) where.push(`created_at >= ${param(f.createdFrom)}`);
  if (f.createdTo !== undefined) where.push(`created_at <= ${param(f.createdTo)}`);
  if (f.updatedFrom !== undefined) where.push(`last_updated_at >= ${param(f.updatedFrom)}`);
  if (f.updatedTo !== undefined) where.push(`last_updated_at <= ${param(f.updatedTo)}`);
  const column = f.sort === "createdAt" ? "created_at" : "last_updated_at";
  const direction = f.order === "asc" ? "ASC" : "DESC";
  if (f.cursor !== undefined) {
    const after = decodeCursor(f.cursor, f.sort, f.order);
    where.push(`(${column}, request_id) ${f.order === "asc" ? ">" : "<"} (${param(after.value)}, ${param(after.id)})`);
  }
  const { rows } = await db.query<{ record: RequestRecord }>(
    `SELECT record FROM requests ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY ${column} ${direction}, request_id ${direction} LIMIT ${param(f.limit + 1)}`,
    values,
  );
  const items = rows.slice(0, f.limit).map((row) => summaryOf(row.record));
  const last = items.at(-1);
  const more = rows.length > f.limit && last !== undefined;
  const value = last && (f.sort === "createdAt" ? last.createdAt : last.lastUpdatedAt);
  return { items, nextCursor: more ? encodeCursor({ s: f.sort, o: f.order, v: value!, id: last.requestId }) : null };
}
