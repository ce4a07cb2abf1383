/** The Server-Sent Events wire format, both ways: the hub writes it, clients (tests, bench) read it. */

export interface SseEvent {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

/** One event, ready to write to the stream. */
export function formatEvent(event: string, data: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Reads events out of a stream's text as it arrives, in whatever chunks; comments are skipped. */
export class SseParser {
  private buffer = "";

  push(text: string): SseEvent[] {
    this.buffer += text;
    const events: SseEvent[] = [];
    let end: number;
    while ((end = this.buffer.indexOf("\n\n")) >= 0) {
      const lines = this.buffer
        .slice(0, end)
        .split("\n")
        .filter((line) => !line.startsWith(":"));
      this.buffer = this.buffer.slice(end + 2);
      if (!lines.length) continue;
      const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
      events.push({ id: field("id"), event: field("event") ?? "message", data: JSON.parse(field("data") ?? "null") });
    }
    return events;
  }
}

/** Read an event stream's body to its end (or until aborted), handing over events as they arrive. */
export async function readEvents(body: ReadableStream<Uint8Array>, onEvents: (events: SseEvent[]) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const events = parser.push(decoder.decode(value, { stream: true }));
      if (events.length) onEvents(events);
    }
  } catch {
    // Aborted by the reader's owner.
  }
}
