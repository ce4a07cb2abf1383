import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { Runtime } from "./runtime";

/** A resume point: `<generation>:<seq>`. Anything else is passed on and answered with `reset`. */
const since = z.string().max(64);

/**
 * What a browser that stops reading may leave queued before it is cut off. EventSource then
 * reconnects with Last-Event-ID and is replayed what it missed (or told to reset), so nothing is
 * lost, and a stalled tab cannot grow the server's memory without bound.
 */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

function sinceOf(request: IncomingMessage, query: URLSearchParams): string | null {
  const header = request.headers["last-event-id"];
  const raw = (Array.isArray(header) ? header[0] : header) ?? query.get("since");
  if (raw === null || raw === undefined) return null;
  const parsed = since.safeParse(raw);
  return parsed.success ? parsed.data : "invalid";
}

/**
 * The change feed as Server-Sent Events, written straight to the socket. Resume with
 * `Last-Event-ID` (EventSource sends it on reconnect) or `?since=`; an id the feed cannot resume
 * from gets a `reset` event. Every stream shares the feed hub's batches (lib/dashboard/feedHub.ts).
 */
export function answerEventStream(runtime: Runtime, request: IncomingMessage, response: ServerResponse, query: URLSearchParams): void {
  response.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    // No buffering or compression anywhere between here and the browser.
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",
    Connection: "keep-alive",
  });
  if (request.method === "HEAD") {
    response.end();
    return;
  }
  let unsubscribe = () => {};
  response.on("close", () => unsubscribe());
  unsubscribe = runtime.feed.subscribe(sinceOf(request, query), (chunk) => {
    if (response.destroyed) return;
    if (response.writableLength > MAX_QUEUED_BYTES) {
      response.destroy();
      return;
    }
    response.write(chunk);
  });
  // The client went away while we subscribed.
  if (response.destroyed) unsubscribe();
}
