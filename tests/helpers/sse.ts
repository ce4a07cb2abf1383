import { createParser } from "eventsource-parser";
import { FEED_EVENT_NAMES, readFeedEvent, type FeedEvent, type FeedEventName, type FeedEventPayloads } from "../../lib/dashboard/feedEvents";
import type { FeedChange } from "../../lib/db/changes";

/** One event of the dashboard's stream, with its id: the union the feed hub sends and the browser reads (lib/dashboard/feedEvents.ts). */
export type SseEvent = FeedEvent & { id?: string };

/** The event named `Name`; over a union of names, the union of their events. */
export type SseEventOf<Name extends FeedEventName> = Name extends FeedEventName ? { id?: string; event: Name; data: FeedEventPayloads[Name] } : never;

/** A Server-Sent Events reader for tests: reads the stream over fetch, as a browser's EventSource would. */
export interface EventStream {
  events: SseEvent[];
  response: Response;
  /**
   * The next event (after those already taken), or the next named `name` that `match` accepts,
   * waiting up to `timeoutMs`. A name the stream does not send is a type error.
   */
  next<Name extends FeedEventName = FeedEventName>(name?: Name, match?: (event: SseEventOf<Name>) => boolean, timeoutMs?: number): Promise<SseEventOf<Name>>;
  /** Wait until `check(events)` holds. */
  until(check: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

const isFeedEventName = (name: string): name is FeedEventName => (FEED_EVENT_NAMES as string[]).includes(name);

export async function openEvents(url: string, headers: Record<string, string> = {}): Promise<EventStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { Accept: "text/event-stream", ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  let taken = 0;
  const waiters = new Set<() => void>();
  // Why the stream stopped early, or sent what no browser reads: a wait then fails and says so.
  let failure: unknown = null;
  const wakeAll = () => {
    for (const wake of waiters) wake();
  };
  const parser = createParser({
    onEvent: (message) => {
      const name = message.event ?? "message";
      if (isFeedEventName(name)) events.push({ ...readFeedEvent(name, message.data), id: message.id });
      else failure ??= new Error(`the stream sent a "${name}" event, which is not in lib/dashboard/feedEvents.ts`);
      wakeAll();
    },
  });
  void (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) parser.feed(decoder.decode(read.value, { stream: true }));
    } catch (error) {
      if (!abort.signal.aborted) failure ??= error;
    }
    if (!abort.signal.aborted) failure ??= new Error("the server ended the stream");
    wakeAll();
  })();

  async function waitFor<T>(probe: () => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = probe();
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (failure || left <= 0) {
        const why = failure ? `; the stream failed: ${String(failure)}` : "";
        throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.event))}${why}`);
      }
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
    next<Name extends FeedEventName = FeedEventName>(name?: Name, match: (event: SseEventOf<Name>) => boolean = () => true, timeoutMs = 10_000) {
      const named = (event: SseEvent): event is SseEventOf<Name> => name === undefined || event.event === name;
      return waitFor(() => {
        const index = events.findIndex((event, i) => i >= taken && named(event) && match(event));
        if (index < 0) return undefined;
        taken = index + 1;
        return events[index] as SseEventOf<Name>;
      }, timeoutMs);
    },
    until(check, timeoutMs = 10_000) {
      return waitFor(() => (check(events) ? events : undefined), timeoutMs);
    },
    close: () => abort.abort(),
  };
}

/** Every change carried by `changes` events, in order. */
export function changesIn(events: readonly SseEvent[]): FeedChange[] {
  return events.flatMap((event) => (event.event === "changes" ? event.data.changes : []));
}
