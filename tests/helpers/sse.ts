import { createParser } from "eventsource-parser";

/** One event as the dashboard's stream sends it: `data` is always JSON. */
export interface SseEvent {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

/** A Server-Sent Events reader for tests: reads the stream over fetch, as a browser's EventSource would. */
export interface EventStream {
  events: SseEvent[];
  response: Response;
  /** The next event (after those already taken) that matches, waiting up to `timeoutMs`. */
  next(match?: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Wait until `check(events)` holds. */
  until(check: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

export async function openEvents(url: string, headers: Record<string, string> = {}): Promise<EventStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { Accept: "text/event-stream", ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  let taken = 0;
  const waiters = new Set<() => void>();
  // Why the stream stopped early, if it did: a wait that then times out says so.
  let failure: unknown = null;
  const parser = createParser({
    onEvent: (message) => {
      events.push({ id: message.id, event: message.event ?? "message", data: JSON.parse(message.data) });
      for (const wake of waiters) wake();
    },
  });
  void (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) parser.feed(decoder.decode(read.value, { stream: true }));
    } catch (error) {
      if (!abort.signal.aborted) failure = error;
    }
  })();

  async function waitFor<T>(probe: () => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = probe();
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.event))}${failure ? `; the stream failed: ${String(failure)}` : ""}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          waiters.delete(wake);
          resolve();
        };
        waiters.add(wake);
        setTimeout(wake, Math.min(left, 200));
      });
    }
  }

  return {
    events,
    response,
    next(match = () => true, timeoutMs = 10_000) {
      return waitFor(() => {
        const index = events.findIndex((event, i) => i >= taken && match(event));
        if (index < 0) return undefined;
        taken = index + 1;
        return events[index];
      }, timeoutMs);
    },
    until(check, timeoutMs = 10_000) {
      return waitFor(() => (check(events) ? events : undefined), timeoutMs);
    },
    close: () => abort.abort(),
  };
}

/** Every change carried by `changes` events, in order. */
export function changesIn(events: SseEvent[]): { seq: number; kind: string; requestId: string; request?: Record<string, unknown> }[] {
  return events.filter((event) => event.event === "changes").flatMap((event) => event.data.changes as never[]);
}
