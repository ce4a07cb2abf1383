import { errorResponse } from "@/app/_server/respond";
import { getTracker } from "@/app/_server/tracker";
import { ReqwatchError } from "@/lib/errors";
import { sessionDetailView } from "@/lib/views/sessionsView";

export const dynamic = "force-dynamic";

export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  try {
    const { id } = await params;
    const view = sessionDetailView(getTracker(), id);
    if (!view) throw new ReqwatchError("NOT_FOUND", `Session ${id} does not exist.`);
    return Response.json(view);
  } catch (error) {
    return errorResponse(error);
  }
}
