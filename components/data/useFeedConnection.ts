import { useEffect, useEffectEvent, useMemo, useState } from "react";
import { FEED_EVENT_NAMES, readFeedEvent, type FeedEvent } from "@/lib/dashboard/feedEvents";

/** connected: the stream is open; reconnecting: it dropped and EventSource is retrying; polling: it failed, queries poll every 5 s. */
type LiveState = "connecting" | "connected" | "reconnecting" | "polling";

export interface LiveStatus {
  state: LiveState;
  /** When the last event arrived, by the browser's clock. */
  lastEventAt: number | null;
}

/** How often live queries poll while the stream is down. */
export const POLL_MS = 5000;
/** After the stream has been down this long, fall back to polling (and keep trying to reconnect). */
const FALLBACK_AFTER_MS = 3000;
/** After the browser gave up on a stream (the server answered with an error), a new one is tried this much later. */
const REOPEN_AFTER_MS = POLL_MS * 3;

/**
 * The one EventSource of a tab: opens `/api/events` from `since` (where the feed stood when the
 * page rendered), hands each event over typed, and says how the connection is. EventSource
 * retries a dropped stream with `Last-Event-ID` by itself; when it gives up, a new one is opened
 * later from the last event id seen. What an event does to the page is the caller's.
 */
export function useFeedConnection(since: string, onEvent: (event: FeedEvent) => void): LiveStatus {
  const [state, setState] = useState<LiveState>("connecting");
  const [lastEventAt, setLastEventAt] = useState<number | null>(null);
  // The latest handler, without reopening the stream when it changes.
  const deliver = useEffectEvent(onEvent);

  useEffect(() => {
    let source: EventSource | null = null;
    let downSince: number | null = null;
    let fallbackTimer: ReturnType<typeof setTimeout> | null = null;
    let reopenTimer: ReturnType<typeof setTimeout> | null = null;
    let closed = false;
    // Where a new EventSource resumes: the render's feed position, then the last event id seen
    // (EventSource resends it by itself only within one connection's retries).
    let resumeFrom = since;

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
      for (const name of FEED_EVENT_NAMES) {
        source.addEventListener(name, (message: MessageEvent<string>) => {
          setLastEventAt(Date.now());
          if (message.lastEventId) resumeFrom = message.lastEventId;
          deliver(readFeedEvent(name, message.data));
        });
      }
      source.addEventListener("error", () => {
        downSince ??= Date.now();
        if (source?.readyState === EventSource.CLOSED) {
          source = null;
          setState("polling");
          reopenTimer = setTimeout(open, REOPEN_AFTER_MS);
          return;
        }
        setState((current) => (current === "polling" ? current : "reconnecting"));
        fallbackTimer ??= setTimeout(() => {
          fallbackTimer = null;
          if (downSince !== null) setState("polling");
        }, FALLBACK_AFTER_MS);
      });
    };
    open();
    return () => {
      closed = true;
      source?.close();
      for (const timer of [fallbackTimer, reopenTimer]) if (timer) clearTimeout(timer);
    };
  }, [since]);

  return useMemo(() => ({ state, lastEventAt }), [state, lastEventAt]);
}
