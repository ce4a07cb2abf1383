import "server-only";
import { errorReply } from "@/lib/http/errorReply";

/** A lib error as a route handler's response (lib/http/errorReply.ts says which status and code). */
export function errorResponse(error: unknown): Response {
  const { status, body } = errorReply(error);
  // A body refused as too large was not read to its end: the connection cannot carry another
  // request, and a client that reused it would be reset (RFC 9112, 9.6).
  return Response.json(body, { status, headers: status === 413 ? { Connection: "close" } : undefined });
}
