import { assertActionAllowed } from "@/app/_routes/guard";
import { errorResponse } from "@/app/_routes/respond";
import { startAction } from "@/app/_routes/startAction";
import { getOperator } from "@/app/_routes/runtime";
import { entryId } from "../entryId";

export const dynamic = "force-dynamic";

/** Undo a cleanup: restore what it archived. Runs like any action and is audited. */
export async function POST(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  try {
    assertActionAllowed(request);
    const id = entryId((await params).id);
    return Response.json({ entry: await startAction((onStart) => getOperator().actions.undo(id, { onStart })) }, { status: 202 });
  } catch (error) {
    return errorResponse(error);
  }
}
