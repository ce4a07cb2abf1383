import "server-only";
import { ReqwatchError } from "@/lib/model/errors";

/** An action's body: ids (at most 10,000 of at most 128 characters) or a query fit well inside this. */
const MAX_ACTION_BODY_BYTES = 2 * 1024 * 1024;

/**
 * A request's JSON body, refused (TOO_LARGE, 413) past `maxBytes` without reading the rest: a
 * stated Content-Length is checked first, and a chunked body is counted as it arrives.
 */
export async function readJsonBody(request: Request, maxBytes = MAX_ACTION_BODY_BYTES): Promise<unknown> {
  const tooLarge = () => new ReqwatchError("TOO_LARGE", `The body is over the ${maxBytes.toLocaleString("en-US")}-byte limit.`);
  const stated = Number(request.headers.get("content-length"));
  if (stated > maxBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new ReqwatchError("BAD_INPUT", "The body must be JSON.");
  }
}
