import { errorResponse } from "@/app/_server/respond";
import { getFeedHub, getTracker } from "@/app/_server/tracker";

export const dynamic = "force-dynamic";

/** What the header shows: counts per state and the stuck monitor's latest pass (the event stream sends the same). */
export function GET(): Response {
  try {
    return Response.json({ counts: getTracker().countsByState(), stuck: getFeedHub().stuckSnapshot });
  } catch (error) {
    return errorResponse(error);
  }
}
