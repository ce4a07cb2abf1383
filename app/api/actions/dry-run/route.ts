import { assertActionAllowed } from "@/app/_routes/guard";
import { errorResponse } from "@/app/_routes/respond";
import { getLastStuck, getOperator, getReader } from "@/app/_routes/runtime";
import { parseActionInput } from "../actionBody";

export const dynamic = "force-dynamic";

/** The dry run of an action: changes nothing, but is guarded like the action (it reads request ids). */
export async function POST(request: Request): Promise<Response> {
  try {
    assertActionAllowed(request);
    return Response.json(getOperator().actions.dryRun(await parseActionInput(request, getReader().options.now(), getLastStuck())));
  } catch (error) {
    return errorResponse(error);
  }
}
