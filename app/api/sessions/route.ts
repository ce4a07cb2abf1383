import { errorResponse } from "@/app/_server/respond";
import { getTracker } from "@/app/_server/tracker";
import { sessionsView } from "@/lib/views/sessionsView";

export const dynamic = "force-dynamic";

export function GET(): Response {
  try {
    return Response.json({ sessions: sessionsView(getTracker()) });
  } catch (error) {
    return errorResponse(error);
  }
}
