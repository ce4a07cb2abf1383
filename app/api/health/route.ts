import { errorResponse } from "@/app/_server/respond";
import { getFeedHub, getIngest, getMonitor, getTracker } from "@/app/_server/tracker";
import { STATES } from "@/lib/states";

export const dynamic = "force-dynamic";

export function GET(): Response {
  try {
    const tracker = getTracker();
    const counts = tracker.countsByState();
    const monitor = getMonitor();
    const pass = monitor.lastPass();
    return Response.json({
      ok: true,
      stateDir: tracker.stateDir.root,
      generation: tracker.generation(),
      requests: STATES.reduce((sum, state) => sum + counts[state], 0),
      unreadableFiles: tracker.unreadableFiles().length,
      ingest: getIngest().status(),
      feed: { ...tracker.feedHead(), generation: tracker.generation(), subscribers: getFeedHub().size },
      // For leak checks: what keeps the event loop alive (sockets, timers, watchers).
      activeResources: process.getActiveResourcesInfo().length,
      monitor: {
        intervalMs: tracker.options.monitorIntervalMs,
        lastPassAt: pass?.at ?? null,
        stuck: pass?.stuck.length ?? null,
        counts: pass?.counts ?? null,
        lastError: monitor.lastError()?.message ?? null,
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
