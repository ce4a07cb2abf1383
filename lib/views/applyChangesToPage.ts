import { decodeCursor, encodeCursor } from "../model/cursor";
import type { FeedChange } from "../db/changes";
import type { RequestSummary } from "../types";
import { toListFilters, type RequestQuery } from "../model/requestQuery";
import type { RequestRow, RequestsView } from "./requestsView";

/** What a batch of changes did to one table page: the new page, and whether only the server can say the rest. */
interface LivePageUpdate {
  page: RequestsView;
  /** True when a change may belong on the page but the browser cannot tell (a text search, "stuck only"), or a row left a page that has more after it. */
  refetch: boolean;
}

type Key = { value: number; id: string };

function keyOf(row: Pick<RequestSummary, "lastUpdatedAt" | "createdAt" | "requestId">, query: RequestQuery): Key {
  return { value: query.sort === "updatedAt" ? row.lastUpdatedAt : row.createdAt, id: row.requestId };
}

/** Negative when `a` comes before `b` in the page's order (the index's: the sort column, then the id). */
function compare(a: Key, b: Key, query: RequestQuery): number {
  const raw = a.value - b.value || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return query.order === "desc" ? -raw : raw;
}

/**
 * Whether a row matches the page's filters, by the same URL-to-filter mapping the server uses
 * (`toListFilters`); null when the query has one only the server can check (text, stuck, callback).
 */
function matches(row: RequestSummary, query: RequestQuery, now: number): boolean | null {
  if (query.q || query.stuck || query.callback) return null;
  const filters = toListFilters(query, now, []);
  if (filters.states && !filters.states.includes(row.state)) return false;
  if (filters.workspace !== undefined && row.workspace !== filters.workspace) return false;
  if (filters.sessionId !== undefined && row.sessionId !== filters.sessionId) return false;
  if (filters.workspacePrefix !== undefined && !row.workspace.startsWith(filters.workspacePrefix)) return false;
  if (filters.sessionPrefix !== undefined && !row.sessionId?.startsWith(filters.sessionPrefix)) return false;
  if (filters.createdFrom !== undefined && row.createdAt < filters.createdFrom) return false;
  if (filters.createdTo !== undefined && row.createdAt >= filters.createdTo) return false;
  return true;
}

/**
 * Apply a batch of feed changes to one cached page of the requests table, in the browser, so a
 * change updates the rows it carries without asking the server: a changed row moves to its
 * sorted place (or leaves the page when it no longer matches), a new one comes in where it falls
 * between the page's bounds (the cursor it was asked with, and its last row when more follow),
 * and a full page passes its last row on to the next (its cursor moves with it).
 */
export function applyChangesToPage(page: RequestsView, query: RequestQuery, changes: readonly FeedChange[], now: number, limit = 50): LivePageUpdate {
  let items: RequestRow[] = page.items;
  let refetch = false;
  let touched = false;
  const lower = query.cursor ? decodeCursor(query.cursor, query.sort, query.order) : null;
  // The last row of a page with more after it bounds what can land on it; it is fixed before the batch.
  const upper = page.nextCursor ? keyOf(page.items.at(-1)!, query) : null;
  for (const change of changes) {
    // A session's change, or a queue's (a pause: its workspace's name where an id would be), moves no row.
    if (change.kind === "session.upserted" || change.kind === "queue.changed") continue;
    if (change.kind === "response.changed") {
      // A response file decides "callback failed" membership: only the server can say.
      if (query.callback) refetch = true;
      continue;
    }
    const at = items.findIndex((row) => row.requestId === change.requestId);
    const before = at >= 0 ? items[at]! : null;
    if (before) {
      items = items.filter((_, i) => i !== at);
      touched = true;
    }
    const row = change.kind === "request.upserted" ? change.request : undefined;
    if (!row) {
      if (before && page.nextCursor) refetch = true;
      continue;
    }
    const fits = matches(row, query, now);
    if (fits === null) {
      // The server decides membership: keep a row that was there, changed in place; anything else, ask.
      if (before)
        items = [...items.slice(0, at), { ...before, ...row, stuckReason: row.state === before.state ? before.stuckReason : null }, ...items.slice(at)];
      else refetch = true;
      continue;
    }
    const key = keyOf(row, query);
    const inBounds = fits && (!lower || compare(key, lower, query) > 0) && (!upper || compare(key, upper, query) <= 0);
    if (!inBounds) {
      if (before && page.nextCursor) refetch = true;
      continue;
    }
    const place = items.findIndex((other) => compare(key, keyOf(other, query), query) < 0);
    const next: RequestRow = { ...row, stuckReason: before && row.state === before.state ? before.stuckReason : null };
    items = place < 0 ? [...items, next] : [...items.slice(0, place), next, ...items.slice(place)];
    touched = true;
  }
  if (!touched) return { page, refetch };
  let nextCursor = page.nextCursor;
  if (items.length > limit) {
    items = items.slice(0, limit);
    const last = keyOf(items.at(-1)!, query);
    nextCursor = encodeCursor({ s: query.sort, o: query.order, v: last.value, id: last.id });
  }
  return { page: { ...page, items, nextCursor }, refetch };
}
