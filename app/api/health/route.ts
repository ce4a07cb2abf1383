import { errorResponse } from "@/app/_server/respond";
import { getEventLoopDelay, getFeedHub, getIndexGuard, getIngest, getMonitor, getTracker } from "@/app/_server/tracker";
import { healthView } from "@/lib/views/healthView";

export const dynamic = "force-dynamic";

/** The health page's figures (lib/views/healthView.ts), plus the feed and, for leak checks, the active resources. */
export function GET(): Response {
  try {
    const tracker = getTracker();
    const { unreadable, monitor, ...health } = healthView(tracker, getIngest().status(), getMonitor(), getIndexGuard().status());
    const pass = getMonitor().lastPass();
    return Response.json({
      // False while the state directory is missing (the server itself still answers).
      ok: health.guard.problem === null,
      ...health,
      unreadableFiles: unreadable.length,
      feed: { ...tracker.feedHead(), generation: health.generation, subscribers: getFeedHub().size },
      // What keeps the event loop alive (sockets, timers, watchers).
      activeResources: process.getActiveResourcesInfo().length,
      // Since the server started, in ms: a long synchronous task shows here as a high max.
      eventLoopDelay: getEventLoopDelay(),
      monitor: { ...monitor, counts: pass?.counts ?? null },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
