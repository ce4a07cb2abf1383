import { errorResponse } from "@/app/_routes/respond";
import { getOperator } from "@/app/_routes/runtime";
import { entryId } from "./entryId";

export const dynamic = "force-dynamic";

/** One audit entry, with live progress while its action runs. */
export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  try {
    return Response.json({ entry: getOperator().actions.entry(entryId((await params).id)) });
  } catch (error) {
    return errorResponse(error);
  }
}
