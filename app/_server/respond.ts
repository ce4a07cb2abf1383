import "server-only";
import { HTTP_STATUS, isReqwatchError } from "@/lib/errors";

/** The one place a lib error becomes an HTTP response: a status, a code, a message. No stack, no paths. */
export function errorResponse(error: unknown): Response {
  if (isReqwatchError(error)) {
    return Response.json({ error: { code: error.code, message: error.message } }, { status: HTTP_STATUS[error.code] });
  }
  console.error(error);
  return Response.json({ error: { code: "INTERNAL", message: "Internal error; see the server log." } }, { status: 500 });
}
