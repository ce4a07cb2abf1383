/** The Server-Sent Events wire format the hub writes (clients read it with eventsource-parser). */

/** One event, ready to write to the stream. */
export function formatEvent(event: string, data: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
