"use client";

import { QueryClient, QueryClientProvider, useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import type { FeedChange } from "@/lib/db/changes";
import type { StuckSnapshot } from "@/lib/dashboard/feedHub";
import type { StateCounts } from "@/lib/db/queries/countByState";
import { parseRequestQuery, type RequestQuery } from "@/lib/model/requestQuery";
import { applyChangesToPage } from "@/lib/views/livePage";
import type { RequestDetailView, RequestRow, RequestsView } from "@/lib/views/requestsView";
import type { QueueRow } from "@/lib/views/queuesView";
import { stuckReasonOf } from "@/lib/views/stuckReason";
import type { SourceStatus } from "@/lib/sources/liveSource";
import type { IndexingProgress } from "@/lib/store/context";
import { activityKeys, auditKeys, overviewKeys, queueKeys, requestKeys, sessionKeys, sourceKeys, statusKeys, workerKeys } from "./queries";

/** connected: the stream is open; reconnecting: it dropped and EventSource is retrying; polling: it failed, queries poll every 5 s. */
export type LiveState = "connecting" | "connected" | "reconnecting" | "polling";

export interface LiveStatus {
  state: LiveState;
  /** When the last event (or heartbeat-carrying event) arrived, by the browser's clock. */
  lastEventAt: number | null;
}

/** What a page's components need of the dashboard, fixed for the page's life. */
export interface DashboardInfo {
  /** The per-launch token that actions must carry. */
  actionToken: string;
  /**
   * Null when reqwatch manages the folder. When it only observes it: why, and how to allow
   * actions, in words (every action button is disabled with this as its tooltip).
   */
  readOnly: string | null;
  /** The state directory shown (for the exact commands the empty states give). */
  stateDir: string;
}

const POLL_MS = 5000;
/** After the stream has been down this long, fall back to polling (and keep trying to reconnect). */
const FALLBACK_AFTER_MS = 3000;
/** List refetches after changes: at most this often, so a burst costs a few refetches, not one per event. */
const LIST_REFRESH_MS = 400;
/** The sessions list, at most this often while changes touch sessions. */
const SESSION_LIST_REFRESH_MS = 2000;
/** The workers page, at most this often while claims change. */
const WORKERS_REFRESH_MS = 2000;
/** The charts, at most this often while requests change state. */
const ACTIVITY_REFRESH_MS = 2000;
/** The overview's last hour (it reads the newest finished requests' histories), at most this often. */
const OVERVIEW_REFRESH_MS = 2000;

// Contexts split so that an event re-renders only what shows it: the status (every event: the
// live indicator), the poll interval (when the stream goes down or comes back: every live query),
// and the dashboard's fixed facts (never).
const StatusContext = createContext<LiveStatus | null>(null);
/** Components that act on changes as they arrive (notifications) subscribe here; it never changes, so it re-renders nothing. */
type ChangeListener = (changes: readonly FeedChange[]) => void;
const ChangesContext = createContext<((listener: ChangeListener) => () => void) | null>(null);
const PollContext = createContext<number | false | null>(null);
const DashboardContext = createContext<DashboardInfo | null>(null);

function need<T>(value: T | null, hook: string): T {
  if (value === null) throw new Error(`${hook} needs <LiveFeedProvider>.`);
  return value;
}

/** The stream's state and the age of its last event (the live indicator). */
export function useLiveStatus(): LiveStatus {
  return need(useContext(StatusContext), "useLiveStatus");
}

/** How often live queries poll: every 5 s while the stream is down, else never (false). */
export function usePollInterval(): number | false {
  const poll = useContext(PollContext);
  if (poll === null) throw new Error("usePollInterval needs <LiveFeedProvider>.");
  return poll;
}

/** Call `listener` with every batch of changes the stream brings (not those a refetch brings); returns nothing to render. */
export function useChanges(listener: ChangeListener): void {
  const subscribe = need(useContext(ChangesContext), "useChanges");
  useEffect(() => subscribe(listener), [subscribe, listener]);
}

export function useDashboard(): DashboardInfo {
  return need(useContext(DashboardContext), "useDashboard");
}

/** The view a table page's query key stands for (its URL query), or null when it cannot be read. */
function queryOfKey(paramsKey: string): RequestQuery | null {
  try {
    return parseRequestQuery(new URLSearchParams(paramsKey));
  } catch {
    return null;
  }
}

/**
 * One TanStack Query cache and one event stream per tab. The stream's events update the cache in
 * the browser: a change moves its row to its sorted place in every cached table page, or takes it
 * off (lib/views/livePage.ts), and only a page whose membership the browser cannot decide (a text
 * search, "stuck only", a row gone from a page with more after it) is refetched; counts and the
 * stuck list, with the rows' stuck reasons, and the queues are set from their events; a `reset` (index rebuilt, or
 * too far behind) refetches everything. At rest the tab makes no request but its event stream.
 */
/**
 * `feedSince`: where the change feed stood when the server rendered the page (`<generation>:<seq>`).
 * The stream starts there, so a change made between the render and the stream's opening is
 * replayed instead of missed.
 */
export function LiveFeedProvider({ actionToken, readOnly, stateDir, feedSince, children }: DashboardInfo & { feedSince: string; children: ReactNode }) {
  const [client] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: 30_000, refetchOnWindowFocus: false, retry: 1 } } }));
  const [info] = useState<DashboardInfo>(() => ({ actionToken, readOnly, stateDir }));
  return (
    <QueryClientProvider client={client}>
      <DashboardContext.Provider value={info}>
        <LiveStream since={feedSince}>{children}</LiveStream>
      </DashboardContext.Provider>
    </QueryClientProvider>
  );
}

function LiveStream({ since, children }: { since: string; children: ReactNode }) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<LiveState>("connecting");
  const [lastEventAt, setLastEventAt] = useState<number | null>(null);
  const [listeners] = useState(() => new Set<ChangeListener>());
  const [subscribe] = useState(() => (listener: ChangeListener) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  });

  useEffect(() => {
    let source: EventSource | null = null;
    let downSince: number | null = null;
    let fallbackTimer: ReturnType<typeof setTimeout> | null = null;
    let reopenTimer: ReturnType<typeof setTimeout> | null = null;
    let listTimer: ReturnType<typeof setTimeout> | null = null;
    const throttles = new Map<readonly unknown[], ReturnType<typeof setTimeout>>();
    let lastListRefresh = 0;
    let closed = false;
    // Where a new EventSource resumes: the render's feed position, then the last event id seen
    // (EventSource resends it by itself only within one connection's retries).
    let resumeFrom = since;

    // Pages whose membership only the server can decide, refetched together at most every LIST_REFRESH_MS.
    const toRefetch = new Set<string>();
    const refetchSoon = (paramsKey: string) => {
      toRefetch.add(paramsKey);
      if (listTimer) return;
      const wait = Math.max(0, lastListRefresh + LIST_REFRESH_MS - Date.now());
      listTimer = setTimeout(() => {
        listTimer = null;
        lastListRefresh = Date.now();
        for (const key of toRefetch) void queryClient.invalidateQueries({ queryKey: [...requestKeys.lists(), key], exact: true });
        toRefetch.clear();
      }, wait);
    };

    /** Every cached table page of the state folder, with the view its key stands for (a source's pages follow the `sources` event). */
    const cachedPages = () =>
      queryClient
        .getQueryCache()
        .findAll({ queryKey: requestKeys.lists() })
        .map((cached) => ({ cached, paramsKey: String(cached.queryKey[2] ?? ""), query: queryOfKey(String(cached.queryKey[2] ?? "")) }))
        .filter(({ query }) => !query?.source);

    // At once, then at most once per `everyMs` for whatever came meanwhile.
    const throttledRefresh = (queryKey: readonly unknown[], everyMs: number) => {
      let again = false;
      const refresh = () => {
        const at = throttles.get(queryKey);
        if (at) {
          again = true;
          return;
        }
        void queryClient.invalidateQueries({ queryKey });
        throttles.set(
          queryKey,
          setTimeout(() => {
            throttles.delete(queryKey);
            if (again) {
              again = false;
              refresh();
            }
          }, everyMs),
        );
      };
      return refresh;
    };
    const refreshSessionList = throttledRefresh(sessionKeys.list(), SESSION_LIST_REFRESH_MS);
    // Claims and their ends move the workers page (refetched only while it is open: an unobserved query is not fetched).
    const refreshWorkers = throttledRefresh(workerKeys.all, WORKERS_REFRESH_MS);
    // A step of a request's lifecycle moves the charts (refetched only while one shows).
    const refreshActivity = throttledRefresh(activityKeys.all, ACTIVITY_REFRESH_MS);
    const refreshOverview = throttledRefresh(overviewKeys.all, OVERVIEW_REFRESH_MS);

    const seen = () => setLastEventAt(Date.now());

    const applyChanges = (all: FeedChange[]) => {
      for (const listener of listeners) listener(all);
      const sessionIds = new Set<string>();
      for (const change of all) {
        if (change.kind === "session.upserted") sessionIds.add(change.requestId);
        else if (change.request?.sessionId) sessionIds.add(change.request.sessionId);
      }
      if (all.some((change) => change.kind === "request.upserted" && (change.request?.state === "processing" || change.request?.previousState === "processing"))) refreshWorkers();
      if (all.some((change) => change.kind === "request.upserted" || change.kind === "request.removed")) {
        refreshActivity();
        refreshOverview();
      }
      // A pause or resume is in the audit log; the queues themselves come in their own event.
      if (all.some((change) => change.kind === "queue.changed")) void queryClient.invalidateQueries({ queryKey: auditKeys.all });
      for (const id of sessionIds) void queryClient.invalidateQueries({ queryKey: sessionKeys.detail(id) });
      // The sessions list counts requests per session: it changes only with a session or a request
      // that has one, and a busy queue must not refetch it (a grouped query) on every batch.
      if (sessionIds.size) refreshSessionList();
      const now = Date.now();
      for (const { cached, paramsKey, query } of cachedPages()) {
        const page = cached.state.data as RequestsView | undefined;
        if (!page) continue;
        if (!query) {
          refetchSoon(paramsKey);
          continue;
        }
        const update = applyChangesToPage(page, query, all, now);
        if (update.page !== page) queryClient.setQueryData(cached.queryKey, update.page);
        if (update.refetch) refetchSoon(paramsKey);
      }
      for (const change of all) if (change.kind !== "session.upserted" && change.kind !== "queue.changed") void queryClient.invalidateQueries({ queryKey: requestKeys.detail(change.requestId) });
    };

    /** A stuck pass: set each cached row's reason from it (a reason holds for the state it was given for); "stuck only" pages whose set changed are refetched. */
    const applyStuck = (snapshot: StuckSnapshot) => {
      const byId = new Map(snapshot.requests.map((entry) => [entry.requestId, entry]));
      const complete = snapshot.requests.length === snapshot.count;
      // A row the snapshot leaves out is not stuck, unless the snapshot was cut short (it carries at most 200).
      const reasonOf = (row: Pick<RequestRow, "requestId" | "state" | "stateSince" | "stuckReason">) =>
        byId.has(row.requestId) ? stuckReasonOf(byId, row) : complete ? null : row.stuckReason;
      for (const { cached, paramsKey, query } of cachedPages()) {
        const page = cached.state.data as RequestsView | undefined;
        if (!page) continue;
        if (query?.stuck) {
          const shown = new Set(page.items.map((row) => row.requestId));
          if (!complete || shown.size !== byId.size || [...byId.keys()].some((id) => !shown.has(id))) refetchSoon(paramsKey);
        }
        if (page.items.every((row) => row.stuckReason === reasonOf(row))) continue;
        queryClient.setQueryData(cached.queryKey, { ...page, items: page.items.map((row) => ({ ...row, stuckReason: reasonOf(row) })) });
      }
      queryClient.setQueriesData<RequestDetailView>({ queryKey: requestKeys.details() }, (view) => {
        if (!view) return view;
        const row = { requestId: view.request.requestId, state: view.request.state, stateSince: view.stateSince, stuckReason: view.stuckReason };
        const reason = reasonOf(row);
        return reason === view.stuckReason ? view : { ...view, stuckReason: reason };
      });
    };

    const remember = (event: Event) => {
      const id = (event as MessageEvent<string>).lastEventId;
      if (id) resumeFrom = id;
    };

    const open = () => {
      if (closed) return;
      source = new EventSource(`/api/events?since=${encodeURIComponent(resumeFrom)}`);
      source.addEventListener("open", () => {
        downSince = null;
        // Cleared and forgotten, so the next outage arms it again.
        if (fallbackTimer) clearTimeout(fallbackTimer);
        fallbackTimer = null;
        setState("connected");
      });
      source.addEventListener("ready", (event) => {
        seen();
        remember(event);
        const data = JSON.parse((event as MessageEvent<string>).data) as { counts: StateCounts };
        queryClient.setQueryData(statusKeys.counts, data.counts);
      });
      const refetchEverything = () => {
        void queryClient.invalidateQueries({ queryKey: requestKeys.all });
        void queryClient.invalidateQueries({ queryKey: auditKeys.all });
        void queryClient.invalidateQueries({ queryKey: sessionKeys.all });
        void queryClient.invalidateQueries({ queryKey: queueKeys.all });
        void queryClient.invalidateQueries({ queryKey: workerKeys.all });
        void queryClient.invalidateQueries({ queryKey: activityKeys.all });
        void queryClient.invalidateQueries({ queryKey: overviewKeys.all });
      };
      source.addEventListener("reset", (event) => {
        seen();
        remember(event);
        const data = JSON.parse((event as MessageEvent<string>).data) as { counts: StateCounts };
        queryClient.setQueryData(statusKeys.counts, data.counts);
        refetchEverything();
      });
      // The folder is being indexed (a first open): rows come in without feed changes, so what is shown is fetched again.
      source.addEventListener("indexing", (event) => {
        seen();
        const data = JSON.parse((event as MessageEvent<string>).data) as { indexing: IndexingProgress | null; counts: StateCounts };
        queryClient.setQueryData(statusKeys.indexing, data.indexing);
        queryClient.setQueryData(statusKeys.counts, data.counts);
        refetchEverything();
      });
      // A retention run ended: the overview says what it removed, the audit log has its entry.
      source.addEventListener("retention", () => {
        seen();
        void queryClient.invalidateQueries({ queryKey: overviewKeys.all });
        void queryClient.invalidateQueries({ queryKey: auditKeys.all });
      });
      source.addEventListener("changes", (event) => {
        seen();
        remember(event);
        applyChanges((JSON.parse((event as MessageEvent<string>).data) as { changes: FeedChange[] }).changes);
      });
      source.addEventListener("counts", (event) => {
        seen();
        queryClient.setQueryData(statusKeys.counts, (JSON.parse((event as MessageEvent<string>).data) as { counts: StateCounts }).counts);
      });
      source.addEventListener("queues", (event) => {
        seen();
        queryClient.setQueryData(queueKeys.all, (JSON.parse((event as MessageEvent<string>).data) as { queues: QueueRow[] }).queues);
      });
      source.addEventListener("stuck", (event) => {
        seen();
        const snapshot = JSON.parse((event as MessageEvent<string>).data) as StuckSnapshot;
        queryClient.setQueryData(statusKeys.stuck, snapshot);
        // Stuck reasons are on the table's rows and the detail page: set there, not refetched.
        applyStuck(snapshot);
      });
      source.addEventListener("sources", (event) => {
        seen();
        const data = JSON.parse((event as MessageEvent<string>).data) as { sources: SourceStatus[]; changed: string[] };
        // What a source showed before this event (the page's render, or the last event): the first
        // event of a stream names nothing changed, but a write between the render and the stream's
        // start (or while it reconnected) shows in the status it brings.
        const before = new Map((queryClient.getQueryData<SourceStatus[]>(sourceKeys.list()) ?? []).map((status) => [status.name, sourceShows(status)]));
        queryClient.setQueryData(sourceKeys.list(), data.sources);
        // A source's pages and rows are read from its database: refetched when its owner wrote.
        const changed = new Set([...data.changed, ...data.sources.filter((status) => before.has(status.name) && before.get(status.name) !== sourceShows(status)).map((status) => status.name)]);
        if (!changed.size) return;
        // What the receiver kept is also sessions: the list and a received session's page follow it.
        if (changed.has("otel")) {
          refreshSessionList();
          void queryClient.invalidateQueries({ queryKey: sessionKeys.received("otel") });
        }
        void queryClient.invalidateQueries({ queryKey: requestKeys.lists(), predicate: (cached) => changed.has(queryOfKey(String(cached.queryKey[2] ?? ""))?.source ?? "") });
        void queryClient.invalidateQueries({ queryKey: [...sourceKeys.all, "request"], predicate: (cached) => changed.has(String(cached.queryKey[2])) });
      });
      source.addEventListener("error", () => {
        downSince ??= Date.now();
        if (source?.readyState === EventSource.CLOSED) {
          // The browser gave up (the server answered with an error): poll, and try a new stream later.
          source = null;
          setState("polling");
          reopenTimer = setTimeout(open, POLL_MS * 3);
          return;
        }
        setState((current) => (current === "polling" ? current : "reconnecting"));
        if (!fallbackTimer) {
          fallbackTimer = setTimeout(() => {
            fallbackTimer = null;
            if (downSince !== null) setState("polling");
          }, FALLBACK_AFTER_MS);
        }
      });
    };
    open();
    return () => {
      closed = true;
      source?.close();
      for (const timer of [fallbackTimer, reopenTimer, listTimer, ...throttles.values()]) if (timer) clearTimeout(timer);
    };
  }, [queryClient, since, listeners]);

  const status = useMemo<LiveStatus>(() => ({ state, lastEventAt }), [state, lastEventAt]);
  return (
    <StatusContext.Provider value={status}>
      <PollContext.Provider value={state === "polling" ? POLL_MS : false}>
        <ChangesContext.Provider value={subscribe}>{children}</ChangesContext.Provider>
      </PollContext.Provider>
    </StatusContext.Provider>
  );
}

/** What a source's status says of its rows, to tell whether they changed. */
function sourceShows(status: SourceStatus): string {
  return JSON.stringify([status.total, status.counts, status.stuck, status.lastWriteAt, status.error?.message ?? null]);
}
