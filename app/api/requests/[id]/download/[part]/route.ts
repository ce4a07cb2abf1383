import { errorResponse } from "@/app/_routes/respond";
import { getReader } from "@/app/_routes/runtime";
import { ReqwatchError } from "@/lib/model/errors";
import { TEXT_FIELDS, type TextField } from "@/lib/model/requestFormat";
import { responseOutput } from "@/lib/views/requestsView";

export const dynamic = "force-dynamic";

/**
 * The whole of a request's text field (`prompt`, `output`, `error`) as a text file, the output of
 * its gateway response file (`response-output`), or the whole request (`json`): what the detail
 * page links to when it shows a long text cut.
 */
export async function GET(_request: Request, { params }: { params: Promise<{ id: string; part: string }> }): Promise<Response> {
  try {
    const { id, part } = await params;
    if (part !== "json" && part !== "response-output" && !TEXT_FIELDS.includes(part as TextField)) {
      throw new ReqwatchError("BAD_INPUT", `Download "json", "response-output" or one of ${TEXT_FIELDS.join(", ")}, not "${part}".`);
    }
    const request = getReader().get(id);
    if (!request) throw new ReqwatchError("NOT_FOUND", `Request ${id} does not exist (it may have been cleaned up).`);
    const json = part === "json";
    const body = json
      ? JSON.stringify(request, null, 2)
      : part === "response-output"
        ? (responseOutput(getReader(), request) ?? "")
        : (request[part as TextField] ?? "");
    return new Response(body, {
      headers: {
        "content-type": json ? "application/json; charset=utf-8" : "text/plain; charset=utf-8",
        // The id is letters, digits, _ and - (checked by get): safe in a header as it is.
        "content-disposition": `attachment; filename="${json ? `${id}.json` : `${id}-${part}.txt`}"`,
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
