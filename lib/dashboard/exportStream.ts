import type { IncomingMessage, ServerResponse } from "node:http";
import { parseRequestQuery } from "../model/requestQuery";
import { EXPORT_CONTENT_TYPE, exportChunks, exportFilterOf, exportFormat } from "../views/exportRows";
import type { Runtime } from "./runtime";

/**
 * `GET /api/export?format=csv|jsonl&<the table's URL query>`: every request the table's filter
 * matched when the export began, each once (one snapshot of the index: lib/views/exportRows.ts).
 * Each chunk waits for the socket to take the previous one and leaves the event loop free in
 * between, so a big export holds one chunk in memory and never stalls the server. A bad query, or
 * any failure to read the snapshot, is refused before anything is sent.
 */
export async function answerExport(runtime: Runtime, request: IncomingMessage, response: ServerResponse, query: URLSearchParams): Promise<void> {
  const format = exportFormat(query.get("format") ?? "");
  const filter = exportFilterOf(parseRequestQuery(query), runtime.reader.options.now(), runtime.lastStuck());
  const chunks = exportChunks(runtime.reader, filter, format);
  try {
    // The snapshot is read before the headers: a filter the index refuses is still a clean error.
    const first = await chunks.next();
    response.writeHead(200, {
      "Content-Type": EXPORT_CONTENT_TYPE[format],
      "Content-Disposition": `attachment; filename="requests.${format}"`,
      "Cache-Control": "no-store",
    });
    if (request.method === "HEAD") {
      response.end();
      await chunks.return();
      return;
    }
    void streamRest(response, chunks, first);
  } catch (error) {
    await chunks.return();
    throw error;
  }
}

/** Until the socket takes more, or is gone (a download cancelled never drains). */
function drainedOrClosed(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.on("drain", done);
    response.on("close", done);
  });
}

async function streamRest(
  response: ServerResponse,
  chunks: AsyncGenerator<string | Buffer, void, undefined>,
  first: IteratorResult<string | Buffer, void>,
): Promise<void> {
  try {
    for (let chunk = first; !chunk.done; chunk = await chunks.next()) {
      if (response.destroyed) return;
      if (!response.write(chunk.value)) await drainedOrClosed(response);
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  } catch (error) {
    // Headers are gone: cutting the response short is the only way left to say it failed.
    console.error("reqwatch: export failed:", (error as Error).message);
    response.destroy();
  } finally {
    // A download cut short: the spool goes now.
    await chunks.return();
  }
}
