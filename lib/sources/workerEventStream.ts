import { createParser } from "eventsource-parser";

/** What the watch does with the worker's events. */
export interface WorkerEvents {
  /** An observation was queued (`observation_queued`). */
  queued(): void;
  /** The queue changed (`processing_status`, `session_completed`): time for a look. */
  changed(): void;
}

/**
 * claude-mem's worker's event stream (`/stream`), read from the moment it is made until the worker
 * ends it or `close()` is called. A GET to 127.0.0.1 only.
 */
export class WorkerEventStream {
  readonly #controller = new AbortController();
  #ended = false;

  constructor(url: string, events: WorkerEvents) {
    void this.#read(url, events);
  }

  /** False once the stream ended, for whatever reason: the watch then opens another at its next look. */
  get following(): boolean {
    return !this.#ended;
  }

  close(): void {
    this.#controller.abort();
  }

  async #read(url: string, events: WorkerEvents): Promise<void> {
    try {
      const response = await fetch(url, { signal: this.#controller.signal, headers: { accept: "text/event-stream" } });
      if (!response.ok || !response.body) return;
      const parser = createParser({
        onEvent: (event) => {
          let type: unknown;
          try {
            type = (JSON.parse(event.data) as { type?: unknown }).type;
          } catch {
            return;
          }
          if (type === "observation_queued") events.queued();
          if (type === "processing_status" || type === "session_completed") events.changed();
        },
      });
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) parser.feed(decoder.decode(read.value, { stream: true }));
    } catch {
      // The worker went away or we closed: the watch's next look says which.
    } finally {
      this.#ended = true;
    }
  }
}
