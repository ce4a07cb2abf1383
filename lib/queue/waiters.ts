import { TimeoutError } from "../model/errors";
import { dataVersion, type IndexDb } from "../db/openIndex";
import { finishedAmong } from "../db/queries/finishedRequests";
import type { RequestRecord } from "../model/requestFormat";
import { isTerminal } from "../model/states";

interface Waiter {
  resolve: (request: RequestRecord) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** How often to look for other processes' commits while anyone waits. */
const POLL_MS = 25;

/**
 * In-process waits for requests to finish. A commit by this process resolves its waiters at once;
 * another process's commit is noticed by polling SQLite's `data_version` (cheap: no query unless it
 * changed) while, and only while, someone is waiting.
 */
export class Waiters {
  readonly #waiting = new Map<string, Set<Waiter>>();
  #poller: NodeJS.Timeout | null = null;
  #dataVersion = -1;
  #versionOf: IndexDb | null = null;

  /** Asked each time: the tracker reopens its index when the file is lost. */
  readonly #index: () => IndexDb;

  constructor(index: () => IndexDb) {
    this.#index = index;
  }

  /** How many waits are pending (the tests check that none leak). */
  get size(): number {
    let n = 0;
    for (const set of this.#waiting.values()) n += set.size;
    return n;
  }

  wait(requestId: string, current: RequestRecord | null, timeoutMs: number): Promise<RequestRecord> {
    if (current && isTerminal(current.state)) return Promise.resolve(current);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#remove(requestId, waiter);
          reject(new TimeoutError(`Request ${requestId} did not finish within ${timeoutMs} ms.`, { requestId, timeoutMs }));
        }, timeoutMs),
      };
      let set = this.#waiting.get(requestId);
      if (!set) this.#waiting.set(requestId, (set = new Set()));
      set.add(waiter);
      this.#startPolling();
    });
  }

  /** A commit of this process. */
  notify(request: RequestRecord): void {
    if (!isTerminal(request.state)) return;
    const set = this.#waiting.get(request.requestId);
    if (!set) return;
    for (const waiter of set) {
      clearTimeout(waiter.timer);
      waiter.resolve(request);
    }
    this.#waiting.delete(request.requestId);
    this.#stopPollingIfIdle();
  }

  /** Reject every wait (the tracker is closing). */
  close(): void {
    for (const [requestId, set] of this.#waiting) {
      for (const waiter of set) {
        clearTimeout(waiter.timer);
        waiter.reject(new TimeoutError(`The tracker closed while waiting for request ${requestId}.`, { requestId }));
      }
    }
    this.#waiting.clear();
    this.#stopPollingIfIdle();
  }

  #remove(requestId: string, waiter: Waiter): void {
    const set = this.#waiting.get(requestId);
    set?.delete(waiter);
    if (set?.size === 0) this.#waiting.delete(requestId);
    this.#stopPollingIfIdle();
  }

  #startPolling(): void {
    if (this.#poller) return;
    this.#dataVersion = -1;
    this.#poller = setInterval(() => this.#poll(), POLL_MS);
    this.#poller.unref();
  }

  #stopPollingIfIdle(): void {
    if (this.#waiting.size === 0 && this.#poller) {
      clearInterval(this.#poller);
      this.#poller = null;
    }
  }

  #poll(): void {
    const db = this.#index();
    if (!db.open) return;
    // data_version counts per connection: a reopened index starts a new count.
    if (db !== this.#versionOf) [this.#versionOf, this.#dataVersion] = [db, -1];
    const version = dataVersion(db);
    if (version === this.#dataVersion) return;
    this.#dataVersion = version;
    for (const request of finishedAmong(db, [...this.#waiting.keys()])) this.notify(request);
  }
}
