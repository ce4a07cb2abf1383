"use client";

import { QueryClient, QueryClientProvider, useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import type { FeedChange } from "@/lib/db/changes";
import { cacheUpdateFor, writeCacheUpdate, type CacheUpdate, type Refresh } from "./feedReducer";
import { activityKeys, overviewKeys, requestKeys, sessionKeys, workerKeys } from "./queries";
import { POLL_MS, useFeedConnection, type LiveStatus } from "./useFeedConnection";

/** What a page's components need of the dashboard, fixed for the page's life. */
interface DashboardInfo {
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

/**
 * One TanStack Query cache and one event stream per tab (useFeedConnection). Each event updates
 * the cache in the browser through one reducer (feedReducer.ts); at rest the tab makes no request
 * but its event stream. `feedSince`: where the change feed stood when the server rendered the
 * page (`<generation>:<seq>`); the stream starts there, so a change made between the render and
 * the stream's opening is replayed instead of missed.
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

/** How often each paced refresh runs at most while events keep asking for it. */
const REFRESHES: Record<Refresh, { queryKey: readonly unknown[]; everyMs: number }> = {
  // The sessions list is a grouped query: a busy queue must not refetch it on every batch.
  sessionList: { queryKey: sessionKeys.list(), everyMs: 2000 },
  // Refetched only while the workers page is open: an unobserved query is not fetched.
  workers: { queryKey: workerKeys.all, everyMs: 2000 },
  activity: { queryKey: activityKeys.all, everyMs: 2000 },
  // The overview's last hour reads the newest finished requests' histories.
  overview: { queryKey: overviewKeys.all, everyMs: 2000 },
};
/** Table pages only the server can decide: refetched together at most this often, so a burst costs a few refetches, not one per event. */
const LIST_REFRESH_MS = 400;

/**
 * Carries out the reducer's updates: sets and refetches at once, the table pages and the paced
 * views at their pace. `stop` forgets what was waiting, so a remount starts clean.
 */
function cacheWriter(queryClient: QueryClient) {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (run: () => void, ms: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };

  const toRefetch = new Set<string>();
  let listDue = false;
  let lastListRefresh = 0;
  const refetchPages = (paramsKeys: string[]) => {
    for (const key of paramsKeys) toRefetch.add(key);
    if (listDue || !toRefetch.size) return;
    listDue = true;
    later(
      () => {
        listDue = false;
        lastListRefresh = Date.now();
        for (const key of toRefetch) void queryClient.invalidateQueries({ queryKey: [...requestKeys.lists(), key], exact: true });
        toRefetch.clear();
      },
      Math.max(0, lastListRefresh + LIST_REFRESH_MS - Date.now()),
    );
  };

  // At once, then at most once per its interval for whatever came meanwhile.
  const pacing = new Set<Refresh>();
  const askedAgain = new Set<Refresh>();
  const refresh = (name: Refresh) => {
    if (pacing.has(name)) {
      askedAgain.add(name);
      return;
    }
    void queryClient.invalidateQueries({ queryKey: REFRESHES[name].queryKey });
    pacing.add(name);
    later(() => {
      pacing.delete(name);
      if (askedAgain.delete(name)) refresh(name);
    }, REFRESHES[name].everyMs);
  };

  return {
    apply(update: CacheUpdate) {
      writeCacheUpdate(queryClient, update);
      for (const name of update.refresh) refresh(name);
      refetchPages(update.refetchPages);
    },
    stop() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      pacing.clear();
      askedAgain.clear();
      toRefetch.clear();
      listDue = false;
    },
  };
}

function LiveStream({ since, children }: { since: string; children: ReactNode }) {
  const queryClient = useQueryClient();
  const [listeners] = useState(() => new Set<ChangeListener>());
  const [subscribe] = useState(() => (listener: ChangeListener) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  });
  // Made with the component so that no event finds it missing; stopped (and reusable) on unmount.
  const [writer] = useState(() => cacheWriter(queryClient));
  useEffect(() => () => writer.stop(), [writer]);

  const status = useFeedConnection(since, (event) => {
    if (event.event === "changes") for (const listener of listeners) listener(event.data.changes);
    writer.apply(cacheUpdateFor(queryClient, event, Date.now()));
  });
  return (
    <StatusContext.Provider value={status}>
      <PollContext.Provider value={status.state === "polling" ? POLL_MS : false}>
        <ChangesContext.Provider value={subscribe}>{children}</ChangesContext.Provider>
      </PollContext.Provider>
    </StatusContext.Provider>
  );
}
