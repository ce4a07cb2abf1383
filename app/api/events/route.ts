import { getFeedHub } from "@/app/_server/tracker";
import { sinceFrom } from "./schema";

export const dynamic = "force-dynamic";

/**
 * The change feed as Server-Sent Events. Resume with `Last-Event-ID` (EventSource sends it on
 * reconnect) or `?since=`; an id the feed cannot resume from gets a `reset` event.
 */
export function GET(request: Request): Response {
  const since = sinceFrom(request);
  const encoder = new TextEncoder();
  let unsubscribe = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      unsubscribe = getFeedHub().subscribe(since, (chunk) => controller.enqueue(encoder.encode(chunk)));
      request.signal.addEventListener(
        "abort",
        () => {
          unsubscribe();
          try {
            controller.close();
          } catch {
            // Already closed by the client going away.
          }
        },
        { once: true },
      );
    },
    cancel() {
      unsubscribe();
    },
  });
  return new Response(stream, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      // No buffering or compression anywhere between here and the browser.
      "Cache-Control": "no-cache, no-transform",
      "X-Accel-Buffering": "no",
      Connection: "keep-alive",
    },
  });
}
