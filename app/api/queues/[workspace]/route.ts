import { assertActionAllowed } from "@/app/_routes/guard";
import { errorResponse } from "@/app/_routes/respond";
import { getOperator } from "@/app/_routes/runtime";
import { parsePauseBody } from "./pauseBody";

export const dynamic = "force-dynamic";

/** Pause or resume a workspace's queue: `{ "action": "pause", "reason"?: string }` or `{ "action": "resume" }`. */
export async function POST(request: Request, { params }: { params: Promise<{ workspace: string }> }): Promise<Response> {
  try {
    assertActionAllowed(request);
    const [{ workspace }, body] = await Promise.all([params, parsePauseBody(request)]);
    if (body.action === "pause")
      return Response.json(getOperator().pause(workspace, { by: "dashboard", ...(body.reason !== undefined && { reason: body.reason }) }));
    return Response.json({ resumed: getOperator().resume(workspace, { by: "dashboard" }) });
  } catch (error) {
    return errorResponse(error);
  }
}
