// A client of the dashboard's event stream (/api/events) for the bench and the soak. The format is
// eventsource-parser's to follow (CRLF, multi-line data, fields without a space); this only hands
// over the events each chunk of the body completed, together, with their data parsed as JSON.
import { createParser } from "eventsource-parser";

/**
 * Read an event stream's body to its end, calling `onEvents` with each chunk's events
 * (`{ id, event, data }`; `event` is "message" when the server named none). Resolves at the end of
 * the stream or when its fetch is aborted; rejects on any other error (a cut connection, bad JSON).
 */
export async function readEvents(body, onEvents) {
  let arrived = [];
  const parser = createParser({
    onEvent: (message) => arrived.push({ id: message.id, event: message.event ?? "message", data: JSON.parse(message.data) }),
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (!arrived.length) continue;
      const events = arrived;
      arrived = [];
      onEvents(events);
    }
  } catch (error) {
    if (error?.name !== "AbortError") throw error;
  }
}
