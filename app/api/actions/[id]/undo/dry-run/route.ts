import { assertActionAllowed } from "@/app/_routes/guard";
import { errorResponse } from "@/app/_routes/respond";
import { getOperator } from "@/app/_routes/runtime";
import { entryId } from "../../entryId";

export const dynamic = "force-dynamic";

/** The dry run of an undo: what it would restore, and what it would skip and why. Guarded like the undo. */
export async function POST(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  try {
    assertActionAllowed(request);
    return Response.json(getOperator().actions.dryRunUndo(entryId((await params).id)));
  } catch (error) {
    return errorResponse(error);
  }
}
