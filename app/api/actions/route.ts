import { assertActionAllowed } from "@/app/_routes/guard";
import { errorResponse } from "@/app/_routes/respond";
import { startAction } from "@/app/_routes/startAction";
import { getLastStuck, getOperator, getReader } from "@/app/_routes/runtime";
import { parseActionInput } from "./actionBody";

export const dynamic = "force-dynamic";

/** The audit log, newest first. */
export function GET(): Response {
  try {
    return Response.json({ entries: getOperator().actions.list() });
  } catch (error) {
    return errorResponse(error);
  }
}

/** Start an action. It runs in chunks after the response; follow it at /api/actions/<id>. */
export async function POST(request: Request): Promise<Response> {
  try {
    assertActionAllowed(request);
    const input = await parseActionInput(request, getReader().options.now(), getLastStuck());
    return Response.json({ entry: await startAction((onStart) => getOperator().actions.run(input, { onStart })) }, { status: 202 });
  } catch (error) {
    return errorResponse(error);
  }
}
