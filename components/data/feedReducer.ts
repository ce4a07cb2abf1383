import type { InvalidateQueryFilters, QueryClient, QueryKey } from "@tanstack/react-query";
import type { FeedChange } from "@/lib/db/changes";
import type { FeedEvent, FeedEventPayloads } from "@/lib/dashboard/feedEvents";
import { parseRequestQuery, type RequestQuery } from "@/lib/model/requestQuery";
import type { SourceStatus } from "@/lib/sources/liveSource";
import { applyChangesToPage } from "@/lib/views/applyChangesToPage";
import type { RequestDetailView, RequestRow, RequestsView } from "@/lib/views/requestsView";
import { stuckReasonOf } from "@/lib/views/stuckReason";
import { activityKeys, auditKeys, overviewKeys, queueKeys, requestKeys, sessionKeys, sourceKeys, statusKeys, workerKeys } from "./queries";

/** Views refetched at once, then at most once per their own interval while events keep moving them (the stream's owner paces them). */
export type Refresh = "sessionList" | "workers" | "activity" | "overview";

/** What one event does to the cache, as data: the reducer decides it, the stream's owner carries it out. */
export interface CacheUpdate {
  /** Data put in the cache as it is. */
  set: { queryKey: QueryKey; data: unknown }[];
  /** Queries refetched now (those on view; the others when next shown). */
  invalidate: InvalidateQueryFilters[];
  /** Table pages (by their URL query) whose rows only the server can decide, refetched together at a pace. */
  refetchPages: string[];
  refresh: Refresh[];
}

/** The part of the cache the reducer reads: it never writes. */
type CacheReader = Pick<QueryClient, "getQueryData" | "getQueriesData">;

const nothing = (): CacheUpdate => ({ set: [], invalidate: [], refetchPages: [], refresh: [] });

/** Everything a page may show from the state folder (not the sources, which have their event). */
const everything = (): InvalidateQueryFilters[] =>
  [requestKeys.all, auditKeys.all, sessionKeys.all, queueKeys.all, workerKeys.all, activityKeys.all, overviewKeys.all].map((queryKey) => ({ queryKey }));

/**
 * The cache update for one event of the stream: a change moves its row to its sorted place in
 * every cached table page, or takes it off (lib/views/applyChangesToPage.ts), and only a page whose
 * membership the browser cannot decide is refetched; counts, the stuck list (with the rows'
 * reasons) and the queues are set from their events; a `reset` refetches everything. Pure: it
 * reads the cache as it is before the event, so a test gives it a real cache and reads the answer.
 */
export function cacheUpdateFor(cache: CacheReader, event: FeedEvent, now: number): CacheUpdate {
  switch (event.event) {
    case "ready":
    case "counts":
      return { ...nothing(), set: [{ queryKey: statusKeys.counts, data: event.data.counts }] };
    case "reset":
      return { ...nothing(), set: [{ queryKey: statusKeys.counts, data: event.data.counts }], invalidate: everything() };
    // The folder is being indexed (a first open): rows come in without feed changes, so what is shown is fetched again.
    case "indexing":
      return {
        ...nothing(),
        set: [
          { queryKey: statusKeys.indexing, data: event.data.indexing },
          { queryKey: statusKeys.counts, data: event.data.counts },
        ],
        invalidate: everything(),
      };
    // A retention run ended: the overview says what it removed, the audit log has its entry.
    case "retention":
      return { ...nothing(), invalidate: [{ queryKey: overviewKeys.all }, { queryKey: auditKeys.all }] };
    case "queues":
      return { ...nothing(), set: [{ queryKey: queueKeys.all, data: event.data.queues }] };
    case "changes":
      return changesUpdate(cache, event.data.changes, now);
    case "stuck":
      return stuckUpdate(cache, event.data);
    case "sources":
      return sourcesUpdate(cache, event.data);
    default: {
      // An event added to the union and not handled here fails to typecheck; at run time it changes nothing.
      const unhandled: never = event;
      void unhandled;
      return nothing();
    }
  }
}

/** The view a table page's query key stands for (its URL query), or null when it cannot be read. */
function queryOfKey(paramsKey: string): RequestQuery | null {
  try {
    return parseRequestQuery(new URLSearchParams(paramsKey));
  } catch {
    return null;
  }
}

/** Every loaded table page of the state folder, with the view its key stands for (a source's pages follow the `sources` event). */
function cachedPages(cache: CacheReader) {
  return cache
    .getQueriesData<RequestsView>({ queryKey: requestKeys.lists() })
    .map(([queryKey, page]) => ({ queryKey, page, paramsKey: String(queryKey[2] ?? ""), query: queryOfKey(String(queryKey[2] ?? "")) }))
    .filter((cached): cached is typeof cached & { page: RequestsView } => cached.page !== undefined && !cached.query?.source);
}

function changesUpdate(cache: CacheReader, changes: readonly FeedChange[], now: number): CacheUpdate {
  const update = nothing();
  const sessionIds = new Set<string>();
  for (const change of changes) {
    if (change.kind === "session.upserted") sessionIds.add(change.requestId);
    else if (change.request?.sessionId) sessionIds.add(change.request.sessionId);
  }
  // Claims and their ends move the workers page; a step of a request's lifecycle moves the charts and the overview's last hour.
  if (
    changes.some((change) => change.kind === "request.upserted" && (change.request?.state === "processing" || change.request?.previousState === "processing"))
  )
    update.refresh.push("workers");
  if (changes.some((change) => change.kind === "request.upserted" || change.kind === "request.removed")) update.refresh.push("activity", "overview");
  // A pause or resume is in the audit log; the queues themselves come in their own event.
  if (changes.some((change) => change.kind === "queue.changed")) update.invalidate.push({ queryKey: auditKeys.all });
  for (const id of sessionIds) update.invalidate.push({ queryKey: sessionKeys.detail(id) });
  // The sessions list counts requests per session: it changes only with a session or a request
  // that has one, and a busy queue must not refetch it (a grouped query) on every batch.
  if (sessionIds.size) update.refresh.push("sessionList");
  for (const { queryKey, page, paramsKey, query } of cachedPages(cache)) {
    if (!query) {
      update.refetchPages.push(paramsKey);
      continue;
    }
    const moved = applyChangesToPage(page, query, changes, now);
    if (moved.page !== page) update.set.push({ queryKey, data: moved.page });
    if (moved.refetch) update.refetchPages.push(paramsKey);
  }
  for (const change of changes)
    if (change.kind !== "session.upserted" && change.kind !== "queue.changed") update.invalidate.push({ queryKey: requestKeys.detail(change.requestId) });
  return update;
}

/** A stuck pass: the badge's snapshot, and each cached row's and detail's reason from it (a reason holds for the state it was given for); "stuck only" pages whose set changed are refetched. */
function stuckUpdate(cache: CacheReader, snapshot: FeedEventPayloads["stuck"]): CacheUpdate {
  const update: CacheUpdate = { ...nothing(), set: [{ queryKey: statusKeys.stuck, data: snapshot }] };
  const byId = new Map(snapshot.requests.map((entry) => [entry.requestId, entry]));
  const complete = snapshot.requests.length === snapshot.count;
  // A row the snapshot leaves out is not stuck, unless the snapshot was cut short (the hub sends at most STUCK_SENT).
  const reasonOf = (row: Pick<RequestRow, "requestId" | "state" | "stateSince" | "stuckReason">) =>
    byId.has(row.requestId) ? stuckReasonOf(byId, row) : complete ? null : row.stuckReason;
  for (const { queryKey, page, paramsKey, query } of cachedPages(cache)) {
    if (query?.stuck) {
      const shown = new Set(page.items.map((row) => row.requestId));
      if (!complete || shown.size !== byId.size || [...byId.keys()].some((id) => !shown.has(id))) update.refetchPages.push(paramsKey);
    }
    if (page.items.every((row) => row.stuckReason === reasonOf(row))) continue;
    update.set.push({ queryKey, data: { ...page, items: page.items.map((row) => ({ ...row, stuckReason: reasonOf(row) })) } });
  }
  for (const [queryKey, view] of cache.getQueriesData<RequestDetailView>({ queryKey: requestKeys.details() })) {
    if (!view) continue;
    const reason = reasonOf({ requestId: view.request.requestId, state: view.request.state, stateSince: view.stateSince, stuckReason: view.stuckReason });
    if (reason !== view.stuckReason) update.set.push({ queryKey, data: { ...view, stuckReason: reason } });
  }
  return update;
}

/** What a source's status says of its rows, to tell whether they changed. */
function sourceShows(status: SourceStatus): string {
  return JSON.stringify([status.total, status.counts, status.stuck, status.lastWriteAt, status.error?.message ?? null]);
}

function sourcesUpdate(cache: CacheReader, { sources, changed: named }: FeedEventPayloads["sources"]): CacheUpdate {
  const update: CacheUpdate = { ...nothing(), set: [{ queryKey: sourceKeys.list(), data: sources }] };
  // What a source showed before this event (the page's render, or the last event): the first
  // event of a stream names nothing changed, but a write between the render and the stream's
  // start (or while it reconnected) shows in the status it brings.
  const before = new Map((cache.getQueryData<SourceStatus[]>(sourceKeys.list()) ?? []).map((status) => [status.name, sourceShows(status)]));
  const changed = new Set([
    ...named,
    ...sources.filter((status) => before.has(status.name) && before.get(status.name) !== sourceShows(status)).map((status) => status.name),
  ]);
  if (!changed.size) return update;
  // A source's pages and rows are read from its database: refetched when its owner wrote.
  update.invalidate.push(
    { queryKey: requestKeys.lists(), predicate: (cached) => changed.has(queryOfKey(String(cached.queryKey[2] ?? ""))?.source ?? "") },
    { queryKey: [...sourceKeys.all, "request"], predicate: (cached) => changed.has(String(cached.queryKey[2])) },
  );
  // What the receiver kept is also sessions and charts: the list and the charts (paced) and a received session's page follow it.
  if (changed.has("otel")) {
    update.refresh.push("sessionList", "activity");
    update.invalidate.push({ queryKey: sessionKeys.received("otel") });
  }
  return update;
}

/** The part of an update that takes effect at once: the data set, then the refetches asked for now. */
export function writeCacheUpdate(queryClient: QueryClient, update: CacheUpdate): void {
  for (const { queryKey, data } of update.set) queryClient.setQueryData(queryKey, data);
  for (const filters of update.invalidate) void queryClient.invalidateQueries(filters);
}
