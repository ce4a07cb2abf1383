import { readJsonBody } from "@/app/_routes/body";
import { assertActionAllowed } from "@/app/_routes/guard";
import { errorResponse } from "@/app/_routes/respond";
import { getRuntime } from "@/lib/dashboard/runtime";
import { actOnSource } from "@/lib/dashboard/sourceActions";
import { parseSourceActionInput } from "@/lib/sources/sourceActions";

export const dynamic = "force-dynamic";

/** Retry or delete messages of a source opened with ?write=1: `{ kind, ids, dryRun }` (a dry run unless dryRun is false). */
export async function POST(request: Request, { params }: { params: Promise<{ name: string }> }): Promise<Response> {
  try {
    assertActionAllowed(request);
    const { name } = await params;
    const input = parseSourceActionInput(await readJsonBody(request));
    const { sources, operator } = getRuntime();
    return Response.json(actOnSource(sources.get(name), operator.actions, input, "dashboard"));
  } catch (error) {
    return errorResponse(error);
  }
}
