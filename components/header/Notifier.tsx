"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useReducer, useRef, useSyncExternalStore } from "react";
import type { FeedChange } from "@/lib/db/changes";
import { useChanges } from "../data/LiveFeed";
import { stuckOptions } from "../data/queries";

/** The tab remembers the choice; the browser remembers the permission. */
const STORAGE_KEY = "reqwatch.notifications";
/** At most one notification this often: a burst of failures is one notification, not a flood. */
const NOTIFY_GAP_MS = 10_000;

type Choice = "unsupported" | "off" | "on" | "blocked";

function readChoice(): Choice {
  if (!("Notification" in window)) return "unsupported";
  if (Notification.permission === "denied") return "blocked";
  return localStorage.getItem(STORAGE_KEY) === "on" && Notification.permission === "granted" ? "on" : "off";
}

/** Another tab's toggle. */
function subscribeToStorage(onChange: () => void): () => void {
  window.addEventListener("storage", onChange);
  return () => window.removeEventListener("storage", onChange);
}

/**
 * Opt-in browser notifications, for a tab left in the background: when the stuck count rises, and
 * when a request fails. Each links to what caused it (the request, or the list when there are
 * several). Nothing is asked of the server: both come from what the event stream already brings.
 */
export function Notifier() {
  const router = useRouter();
  // Read from the browser (the server renders "off"); a toggle here re-renders to read it again.
  const choice = useSyncExternalStore(subscribeToStorage, readChoice, () => "off" as const);
  const [, rerender] = useReducer((n: number) => n + 1, 0);

  const lastShownAt = useRef(0);
  const notify = useCallback(
    (title: string, body: string, href: string) => {
      if (choice !== "on" || Date.now() - lastShownAt.current < NOTIFY_GAP_MS) return;
      lastShownAt.current = Date.now();
      const notification = new Notification(title, { body, tag: "reqwatch" });
      notification.onclick = () => {
        window.focus();
        router.push(href);
        notification.close();
      };
    },
    [choice, router],
  );

  useChanges(
    useCallback(
      (changes: readonly FeedChange[]) => {
        // Entering failed now: not a later write to a request already failed (a callback result, say).
        const failed = changes.filter(
          (change) => change.kind === "request.upserted" && change.request?.state === "failed" && change.request.stateSince === change.request.lastUpdatedAt,
        );
        const first = failed[0];
        if (!first) return;
        if (failed.length === 1)
          notify(`Request ${first.requestId} failed`, `workspace ${first.request!.workspace}`, `/requests/${encodeURIComponent(first.requestId)}`);
        else
          notify(
            `${failed.length} requests failed`,
            failed
              .slice(0, 3)
              .map((change) => change.requestId)
              .join(", "),
            "/requests?states=failed",
          );
      },
      [notify],
    ),
  );

  // Set by the stream's stuck events (the badge holds the first); never fetched from here.
  const stuck = useQuery({ ...stuckOptions(), enabled: false }).data;
  // The count decides (an event carries at most 200 requests); the ids only name what is new.
  const known = useRef<{ count: number; ids: Set<string> } | null>(null);
  useEffect(() => {
    if (!stuck) return;
    const before = known.current;
    known.current = { count: stuck.count, ids: new Set(stuck.requests.map((entry) => entry.requestId)) };
    if (!before || stuck.count <= before.count) return;
    const added = stuck.requests.filter((entry) => !before.ids.has(entry.requestId));
    const only = added.length === 1 ? added[0] : undefined;
    notify(
      `${stuck.count} stuck`,
      only ? `${only.requestId}: ${only.reason}` : `${stuck.count - before.count} more stuck`,
      only ? `/requests/${encodeURIComponent(only.requestId)}` : "/requests?stuck=1",
    );
  }, [stuck, notify]);

  if (choice === "unsupported") return null;
  const toggle = async () => {
    if (choice === "on") localStorage.removeItem(STORAGE_KEY);
    else if ((await Notification.requestPermission()) === "granted") localStorage.setItem(STORAGE_KEY, "on");
    rerender();
  };
  return (
    <button
      type="button"
      className="notify"
      aria-pressed={choice === "on"}
      disabled={choice === "blocked"}
      onClick={() => void toggle()}
      title={
        choice === "blocked"
          ? "This browser blocks notifications from this page: allow them in the site settings."
          : choice === "on"
            ? "Notifications are on: a new stuck request or a failure shows one, at most every 10 s. Click to turn them off."
            : "Get a browser notification when a request gets stuck or fails, while this tab is open."
      }
    >
      {choice === "on" ? "Notifications on" : choice === "blocked" ? "Notifications blocked" : "Notify me"}
    </button>
  );
}
