import { errorResponse } from "@/app/_server/respond";
import { getStuck, getTracker } from "@/app/_server/tracker";
import { ReqwatchError } from "@/lib/errors";
import { requestDetailView } from "@/lib/views/requestsView";

export const dynamic = "force-dynamic";

export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  try {
    const { id } = await params;
    const view = requestDetailView(getTracker(), id, getStuck());
    if (!view) throw new ReqwatchError("NOT_FOUND", `Request ${id} does not exist (it may have been cleaned up).`);
    return Response.json(view);
  } catch (error) {
    return errorResponse(error);
  }
}
