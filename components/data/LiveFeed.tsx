"use client";

import { QueryClient, QueryClientProvider, useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import type { FeedChange } from "@/lib/feed/changes";
import type { StuckSnapshot } from "@/lib/feed/feedHub";
import type { StateCounts } from "@/lib/index/queries/countByState";
import type { RequestsView } from "@/lib/views/requestsView";
import { auditKeys, requestKeys, sessionKeys, statusKeys } from "./queries";

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
}

const POLL_MS = 5000;
/** After the stream has been down this long, fall back to polling (and keep trying to reconnect). */
const FALLBACK_AFTER_MS = 3000;
/** List refetches after changes: at most this often, so a burst costs a few refetches, not one per event. */
const LIST_REFRESH_MS = 400;

// Three contexts, so that an event re-renders only what shows it: the status (every event: the
// live indicator), the poll interval (when the stream goes down or comes back: every live query),
// and the dashboard's fixed facts (never).
const StatusContext = createContext<LiveStatus | null>(null);
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

export function useDashboard(): DashboardInfo {
  return need(useContext(DashboardContext), "useDashboard");
}

/**
 * One TanStack Query cache and one event stream per tab. The stream's events update the cache:
 * rows in every cached table page change in place at once, table pages then refetch (so new and
 * removed rows appear in their sorted place), counts and the stuck list are set directly, and a
 * `reset` (index rebuilt, or too far behind) refetches everything.
 */
export function LiveFeedProvider({ actionToken, readOnly, children }: DashboardInfo & { children: ReactNode }) {
  const [client] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: 30_000, refetchOnWindowFocus: false, retry: 1 } } }));
  const [info] = useState<DashboardInfo>(() => ({ actionToken, readOnly }));
  return (
    <QueryClientProvider client={client}>
      <DashboardContext.Provider value={info}>
        <LiveStream>{children}</LiveStream>
      </DashboardContext.Provider>
    </QueryClientProvider>
  );
}

function LiveStream({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<LiveState>("connecting");
  const [lastEventAt, setLastEventAt] = useState<number | null>(null);

  useEffect(() => {
    let source: EventSource | null = null;
    let downSince: number | null = null;
    let fallbackTimer: ReturnType<typeof setTimeout> | null = null;
    let reopenTimer: ReturnType<typeof setTimeout> | null = null;
    let listTimer: ReturnType<typeof setTimeout> | null = null;
    let lastListRefresh = 0;
    let closed = false;

    const refreshLists = () => {
      if (listTimer) return;
      const wait = Math.max(0, lastListRefresh + LIST_REFRESH_MS - Date.now());
      listTimer = setTimeout(() => {
        listTimer = null;
        lastListRefresh = Date.now();
        void queryClient.invalidateQueries({ queryKey: requestKeys.lists() });
      }, wait);
    };

    const seen = () => setLastEventAt(Date.now());

    const applyChanges = (all: FeedChange[]) => {
      const sessionChanges = all.filter((change) => change.kind === "session.upserted");
      for (const change of sessionChanges) void queryClient.invalidateQueries({ queryKey: sessionKeys.detail(change.requestId) });
      // Session pages count requests and list them: any change refreshes the sessions list.
      void queryClient.invalidateQueries({ queryKey: sessionKeys.list() });
      const changes = all.filter((change) => change.kind !== "session.upserted");
      for (const sessionId of new Set(changes.map((change) => change.request?.sessionId).filter(Boolean))) {
        void queryClient.invalidateQueries({ queryKey: sessionKeys.detail(sessionId!) });
      }
      const byId = new Map(changes.map((change) => [change.requestId, change]));
      queryClient.setQueriesData<RequestsView>({ queryKey: requestKeys.lists() }, (page) => {
        if (!page) return page;
        let touched = false;
        const items = page.items.flatMap((row) => {
          const change = byId.get(row.requestId);
          if (!change) return [row];
          touched = true;
          if (change.kind === "request.removed" || !change.request) return [];
          // A stuck reason describes the state it was given for; a new state drops it until the next pass.
          return [{ ...row, ...change.request, stuckReason: change.request.state === row.state ? row.stuckReason : null }];
        });
        return touched ? { ...page, items } : page;
      });
      for (const id of byId.keys()) void queryClient.invalidateQueries({ queryKey: requestKeys.detail(id) });
      refreshLists();
    };

    const open = () => {
      if (closed) return;
      source = new EventSource("/api/events");
      source.addEventListener("open", () => {
        downSince = null;
        // Cleared and forgotten, so the next outage arms it again.
        if (fallbackTimer) clearTimeout(fallbackTimer);
        fallbackTimer = null;
        setState("connected");
      });
      source.addEventListener("ready", (event) => {
        seen();
        const data = JSON.parse((event as MessageEvent<string>).data) as { counts: StateCounts };
        queryClient.setQueryData(statusKeys.counts, data.counts);
      });
      source.addEventListener("reset", (event) => {
        seen();
        const data = JSON.parse((event as MessageEvent<string>).data) as { counts: StateCounts };
        queryClient.setQueryData(statusKeys.counts, data.counts);
        void queryClient.invalidateQueries({ queryKey: requestKeys.all });
        void queryClient.invalidateQueries({ queryKey: auditKeys.all });
        void queryClient.invalidateQueries({ queryKey: sessionKeys.all });
      });
      source.addEventListener("changes", (event) => {
        seen();
        applyChanges((JSON.parse((event as MessageEvent<string>).data) as { changes: FeedChange[] }).changes);
      });
      source.addEventListener("counts", (event) => {
        seen();
        queryClient.setQueryData(statusKeys.counts, (JSON.parse((event as MessageEvent<string>).data) as { counts: StateCounts }).counts);
      });
      source.addEventListener("stuck", (event) => {
        seen();
        queryClient.setQueryData(statusKeys.stuck, JSON.parse((event as MessageEvent<string>).data) as StuckSnapshot);
        // Stuck reasons are on the table's rows.
        refreshLists();
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
      for (const timer of [fallbackTimer, reopenTimer, listTimer]) if (timer) clearTimeout(timer);
    };
  }, [queryClient]);

  const status = useMemo<LiveStatus>(() => ({ state, lastEventAt }), [state, lastEventAt]);
  return (
    <StatusContext.Provider value={status}>
      <PollContext.Provider value={state === "polling" ? POLL_MS : false}>{children}</PollContext.Provider>
    </StatusContext.Provider>
  );
}
