import { errorResponse } from "@/app/_server/respond";
import { getStuck, getTracker } from "@/app/_server/tracker";
import { parseRequestQuery } from "@/lib/requestQuery";
import { requestsView } from "@/lib/views/requestsView";

export const dynamic = "force-dynamic";

/** One page of the requests table; the query is the page's own URL query (lib/requestQuery.ts). */
export function GET(request: Request): Response {
  try {
    const query = parseRequestQuery(new URL(request.url).searchParams);
    return Response.json(requestsView(getTracker(), query, getStuck()));
  } catch (error) {
    return errorResponse(error);
  }
}
