import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseRequestQuery } from "../model/requestQuery";
import { EXPORT_CONTENT_TYPE, exportChunks, exportFilterOf, exportFormat } from "../views/exportRows";
import type { Runtime } from "./runtime";

/**
 * `GET /api/export?format=csv|jsonl&<the table's URL query>`: every request the table's filter
 * matches, streamed a page at a time. Each page waits for the socket to take the previous one and
 * leaves the event loop free in between, so a big export holds one page in memory and never stalls
 * the server. A bad query is refused before anything is sent.
 */
export function answerExport(runtime: Runtime, request: IncomingMessage, response: ServerResponse, query: URLSearchParams): void {
  const format = exportFormat(query.get("format") ?? "");
  const filter = exportFilterOf(parseRequestQuery(query), runtime.tracker.options.now(), runtime.lastStuck());
  const chunks = exportChunks(runtime.tracker, filter, format);
  // The first page is read before the headers, so a filter the index refuses is still a clean error.
  const first = chunks.next();
  response.writeHead(200, {
    "Content-Type": EXPORT_CONTENT_TYPE[format],
    "Content-Disposition": `attachment; filename="requests.${format}"`,
    "Cache-Control": "no-store",
  });
  if (request.method === "HEAD") {
    response.end();
    return;
  }
  void (async () => {
    try {
      for (let chunk = first; !chunk.done; chunk = chunks.next()) {
        if (response.destroyed) return;
        if (!response.write(chunk.value)) await once(response, "drain");
        await new Promise((resolve) => setImmediate(resolve));
      }
      response.end();
    } catch (error) {
      // Headers are gone: cutting the response short is the only way left to say it failed.
      console.error("reqwatch: export failed:", (error as Error).message);
      response.destroy();
    }
  })();
}
