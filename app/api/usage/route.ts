import { errorResponse } from "@/app/_routes/respond";
import { ReqwatchError } from "@/lib/model/errors";
import { getUsage } from "@/app/_routes/runtime";
import { usageQuery } from "./schema";

export const dynamic = "force-dynamic";

/** The agents' usage from their own files: `?by=day|month|session|project|model&since&until&timezone&agent`. */
export async function GET(request: Request): Promise<Response> {
  const parsed = usageQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!parsed.success)
    return errorResponse(
      new ReqwatchError("BAD_INPUT", `Invalid ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}.`),
    );
  try {
    return Response.json(await getUsage(parsed.data));
  } catch (error) {
    return errorResponse(error);
  }
}
