import { errorResponse } from "@/app/_server/respond";
import { getTracker } from "@/app/_server/tracker";
import { STATES } from "@/lib/states";

export const dynamic = "force-dynamic";

export function GET(): Response {
  try {
    const tracker = getTracker();
    const counts = tracker.countsByState();
    return Response.json({
      ok: true,
      stateDir: tracker.stateDir.root,
      generation: tracker.generation(),
      requests: STATES.reduce((sum, state) => sum + counts[state], 0),
      unreadableFiles: tracker.unreadableFiles().length,
    });
  } catch (error) {
    return errorResponse(error);
  }
}
