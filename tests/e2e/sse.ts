/** A Server-Sent Events reader for tests: reads the stream over fetch, as a browser's EventSource would. */
export interface SseEvent {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

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
  (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split("\n").filter((line) => !line.startsWith(":"));
          if (!lines.length) continue;
          const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
          events.push({ id: field("id"), event: field("event") ?? "message", data: JSON.parse(field("data") ?? "null") });
          for (const wake of waiters) wake();
        }
      }
    } catch {
      // Aborted.
    }
  })();

  async function waitFor<T>(probe: () => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = probe();
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.event))}`);
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
