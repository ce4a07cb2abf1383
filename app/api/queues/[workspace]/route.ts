import { assertActionAllowed } from "@/app/_routes/guard";
import { readJsonBody } from "@/app/_routes/body";
import { errorResponse } from "@/app/_routes/respond";
import { getTracker } from "@/app/_routes/runtime";
import { ReqwatchError } from "@/lib/model/errors";

export const dynamic = "force-dynamic";

/** Pause or resume a workspace's queue: `{ "action": "pause", "reason"?: string }` or `{ "action": "resume" }`. */
export async function POST(request: Request, { params }: { params: Promise<{ workspace: string }> }): Promise<Response> {
  try {
    assertActionAllowed(request);
    const { workspace } = await params;
    const body = (await readJsonBody(request, 4096)) as { action?: unknown; reason?: unknown } | null;
    const reason = typeof body?.reason === "string" ? body.reason.slice(0, 500) : undefined;
    if (body?.action === "pause") return Response.json(getTracker().pause(workspace, { by: "dashboard", ...(reason !== undefined && { reason }) }));
    if (body?.action === "resume") return Response.json({ resumed: getTracker().resume(workspace, { by: "dashboard" }) });
    throw new ReqwatchError("BAD_INPUT", 'The body must be { "action": "pause" } (with an optional "reason") or { "action": "resume" }.');
  } catch (error) {
    return errorResponse(error);
  }
}
