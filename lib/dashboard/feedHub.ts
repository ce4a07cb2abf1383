import type { StateCounts } from "../db/queries/countByState";
import type { StuckRequest } from "../types";
import type { Reader } from "../roles/reader";
import { queuesView, stuckBy } from "../views/queuesView";
import type { FeedChange } from "../db/changes";
import { formatEvent, type ResetReason, type RetentionRun, type StuckSnapshot } from "./feedEvents";
import type { SourceStatus } from "../sources/liveSource";
import type { IndexingProgress } from "../store/context";

interface FeedHubOptions {
  /** How often to look for new changes while anyone listens. Default 50 ms. */
  pollMs?: number;
  /** At most one batch this often, so a burst never floods a browser. Default 250 ms. */
  batchMs?: number;
  /** A comment line this often keeps proxies and the browser from timing out. Default 15 s. */
  heartbeatMs?: number;
}

interface Subscriber {
  send: (chunk: string) => void;
  /** The feed position it was brought to when it subscribed (ready, reset or replay): it has every change up to here. */
  fromSeq: number;
}

/** The `id:` of an event: the feed's generation and the sequence number of the last change in it. */
function eventId(generation: string, seq: number): string {
  return `${generation}:${seq}`;
}

function parseEventId(id: string | null | undefined): { generation: string; seq: number } | null {
  const match = id ? /^([0-9a-f-]{36}):(\d{1,15})$/.exec(id) : null;
  return match ? { generation: match[1]!, seq: Number(match[2]) } : null;
}

/** The queues event at most this often while changes move them. */
const QUEUES_EVERY_MS = 1000;

/** A change that can move a workspace's queue: a pause or resume, or a request into or out of queued or processing. */
function movesQueues(change: FeedChange): boolean {
  if (change.kind === "queue.changed" || change.kind === "request.removed") return true;
  const row = change.kind === "request.upserted" ? change.request : undefined;
  return !!row && [row.state, row.previousState].some((state) => state === "queued" || state === "processing");
}

/** A batch of n changes holds the next back n times this (up to the batch interval): a browser gets at most 500 changes a second in small batches. */
const FLUSH_MS_PER_CHANGE = 2;

/** A stuck event carries at most this many requests; the count is always exact. */
const STUCK_SENT = 200;

/**
 * Fans the change feed out to Server-Sent Events subscribers. One poll of the feed (a max(seq)
 * lookup) serves every subscriber, and runs only while there are any. A subscriber that resumes
 * from an event id gets every change after it, in order, then the live ones: no gap, no duplicate.
 * From another generation, or from before the oldest change kept, it gets `reset` and refetches.
 */
export class FeedHub {
  readonly #subscribers = new Set<Subscriber>();
  readonly #pollMs: number;
  readonly #batchMs: number;
  readonly #heartbeatMs: number;
  #pollTimer: NodeJS.Timeout | null = null;
  #heartbeatTimer: NodeJS.Timeout | null = null;
  /** Changes polled but not sent yet: one batch for every subscriber, formatted once. */
  #pending: FeedChange[] = [];
  #flushTimer: NodeJS.Timeout | null = null;
  #lastFlushAt = 0;
  #lastFlushSize = 0;
  #lastSeq: number;
  #generation: string;
  #stuck: StuckSnapshot = { count: 0, at: null, requests: [] };
  /** The latest pass's whole list, for the queues' stuck counts (the event carries only the first STUCK_SENT). */
  #stuckAll: readonly StuckRequest[] = [];
  #sources: SourceStatus[] = [];
  #indexing: IndexingProgress | null = null;
  #retention: RetentionRun | null = null;
  readonly #reader: Reader;

  constructor(reader: Reader, options: FeedHubOptions = {}) {
    this.#reader = reader;
    this.#pollMs = options.pollMs ?? 50;
    this.#batchMs = options.batchMs ?? 250;
    this.#heartbeatMs = options.heartbeatMs ?? 15_000;
    this.#lastSeq = reader.feedHead().lastSeq;
    this.#generation = reader.generation();
  }

  get size(): number {
    return this.#subscribers.size;
  }

  /** Start a subscription; `send` receives SSE text. Returns the function that ends it. */
  subscribe(since: string | null, send: (chunk: string) => void): () => void {
    this.#poll(); // Bring lastSeq up to date, so replay and live delivery meet exactly.
    const subscriber: Subscriber = { send, fromSeq: this.#lastSeq };
    const resume = parseEventId(since);
    const head = this.#reader.feedHead();
    if (since === null) {
      send(
        formatEvent(
          { event: "ready", data: { generation: this.#generation, seq: this.#lastSeq, counts: this.#reader.countsByState() } },
          eventId(this.#generation, this.#lastSeq),
        ),
      );
    } else if (!resume || resume.generation !== this.#generation || resume.seq < head.oldestSeq - 1 || resume.seq > this.#lastSeq) {
      send(this.#reset(!resume ? "unknown event id" : resume.generation !== this.#generation ? "the index was rebuilt" : "too far behind"));
    } else {
      this.#replay(subscriber, resume.seq);
    }
    send(formatEvent({ event: "stuck", data: this.#stuck }));
    if (this.#sources.length) send(formatEvent({ event: "sources", data: { sources: this.#sources, changed: [] } }));
    if (this.#indexing) send(formatEvent({ event: "indexing", data: { indexing: this.#indexing, counts: this.#reader.countsByState() } }));
    if (this.#retention) send(formatEvent({ event: "retention", data: this.#retention }));
    this.#subscribers.add(subscriber);
    this.#startTimers();
    return () => this.#unsubscribe(subscriber);
  }

  /** The stuck monitor's latest pass; sent to every subscriber when what is stuck changed. */
  publishStuck(stuck: StuckRequest[], at: number): void {
    const previous = this.#stuck;
    const queuesBefore = stuckBy(this.#stuckAll);
    this.#stuck = { count: stuck.length, at, requests: stuck.slice(0, STUCK_SENT) };
    this.#stuckAll = stuck;
    const same = previous.count === stuck.length && previous.requests.every((r, i) => r.requestId === stuck[i]?.requestId && r.reason === stuck[i]?.reason);
    if (same) return;
    let chunk = formatEvent({ event: "stuck", data: this.#stuck });
    // A queue's status says how many of its requests are stuck.
    const queuesNow = stuckBy(stuck);
    const differs = ([workspace, count]: [string, { queued: number; processing: number }]) =>
      queuesBefore.get(workspace)?.queued !== count.queued || queuesBefore.get(workspace)?.processing !== count.processing;
    if (queuesNow.size !== queuesBefore.size || [...queuesNow].some(differs)) chunk += this.#queuesIfDue();
    for (const subscriber of this.#subscribers) subscriber.send(chunk);
  }

  /**
   * The `sources` event: every source's counts, stuck count and error, and which of them changed
   * (a browser refetches the pages it shows of those).
   */
  publishSources(sources: SourceStatus[], changed: string[]): void {
    this.#sources = sources;
    const chunk = formatEvent({ event: "sources", data: { sources, changed } });
    for (const subscriber of this.#subscribers) subscriber.send(chunk);
  }

  /**
   * The `indexing` event: how far indexing the folder is, or null once it is complete. A browser
   * shows it and refetches what it shows (the rows come in without feed changes).
   */
  publishIndexing(indexing: IndexingProgress | null): void {
    const ended = this.#indexing !== null && indexing === null;
    if (indexing === null && !ended) return;
    this.#indexing = indexing;
    const chunk = formatEvent({ event: "indexing", data: { indexing, counts: this.#reader.countsByState() } });
    for (const subscriber of this.#subscribers) subscriber.send(chunk);
  }

  /**
   * The `retention` event: a run of the retention ended (what the overview and the audit page say
   * changed). The latest is sent to each new subscriber too: a page rendered during the run (the
   * one at the server's start, say) connects after it ended.
   */
  publishRetention(run: RetentionRun): void {
    this.#retention = { finishedAt: run.finishedAt, removed: run.removed };
    const chunk = formatEvent({ event: "retention", data: this.#retention });
    for (const subscriber of this.#subscribers) subscriber.send(chunk);
  }

  get indexingSnapshot(): IndexingProgress | null {
    return this.#indexing;
  }

  get stuckSnapshot(): StuckSnapshot {
    return this.#stuck;
  }

  /** Every stuck request of the latest pass, less those a change has since moved on: what the badge counts. */
  get stuckRequests(): readonly StuckRequest[] {
    return this.#stuckAll;
  }

  /** Stop everything (server shutdown, tests). */
  close(): void {
    for (const subscriber of this.#subscribers) this.#unsubscribe(subscriber);
  }

  #replay(subscriber: Subscriber, afterSeq: number): void {
    let from = afterSeq;
    while (from < this.#lastSeq) {
      const changes = this.#reader.changesSince(from, 500).filter((change) => change.seq <= this.#lastSeq);
      if (!changes.length) break;
      subscriber.send(formatEvent({ event: "changes", data: { changes } }, eventId(this.#generation, changes.at(-1)!.seq)));
      from = changes.at(-1)!.seq;
    }
    subscriber.send(
      formatEvent({ event: "counts", data: { counts: this.#reader.countsByState() } }) +
        formatEvent({ event: "queues", data: { queues: queuesView(this.#reader, this.#stuckAll) } }),
    );
  }

  /** The `reset` event at the feed's head: the counts come with it, as with `ready`, so the header is right before the refetches return. */
  #reset(reason: ResetReason): string {
    return formatEvent(
      { event: "reset", data: { reason, generation: this.#generation, seq: this.#lastSeq, counts: this.#reader.countsByState() } },
      eventId(this.#generation, this.#lastSeq),
    );
  }

  #unsubscribe(subscriber: Subscriber): void {
    this.#subscribers.delete(subscriber);
    if (this.#subscribers.size === 0) this.#stopTimers();
  }

  #startTimers(): void {
    if (!this.#pollTimer) {
      this.#pollTimer = setInterval(() => this.#poll(), this.#pollMs);
      this.#pollTimer.unref();
    }
    if (!this.#heartbeatTimer) {
      this.#heartbeatTimer = setInterval(() => {
        for (const subscriber of this.#subscribers) subscriber.send(": heartbeat\n\n");
      }, this.#heartbeatMs);
      this.#heartbeatTimer.unref();
    }
  }

  #stopTimers(): void {
    if (this.#pollTimer) clearInterval(this.#pollTimer);
    if (this.#heartbeatTimer) clearInterval(this.#heartbeatTimer);
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    if (this.#queuesTimer) clearTimeout(this.#queuesTimer);
    this.#pollTimer = this.#heartbeatTimer = this.#flushTimer = this.#queuesTimer = null;
    this.#pending = [];
  }

  #poll(): void {
    const generation = this.#reader.generation();
    if (generation !== this.#generation) {
      this.#generation = generation;
      this.#lastSeq = this.#reader.feedHead().lastSeq;
      this.#pending = [];
      const chunk = this.#reset("the index was rebuilt");
      for (const subscriber of this.#subscribers) {
        subscriber.fromSeq = this.#lastSeq;
        subscriber.send(chunk);
      }
      return;
    }
    if (this.#reader.feedLastSeq() <= this.#lastSeq) return;
    for (;;) {
      const changes = this.#reader.changesSince(this.#lastSeq, 1000);
      if (!changes.length) break;
      this.#lastSeq = changes.at(-1)!.seq;
      this.#pending.push(...changes);
      if (changes.length < 1000) break;
    }
    this.#scheduleFlush();
  }

  /**
   * Leading edge: a lone change goes out at once; a burst goes out at most once per `batchMs`. The
   * pause after a batch is FLUSH_MS_PER_CHANGE a change, up to `batchMs`: a slow trickle (the
   * retention's few removals a step) then holds back a live change for a few ms, not 250.
   */
  #scheduleFlush(): void {
    if (this.#flushTimer || !this.#pending.length) return;
    const wait = Math.max(0, this.#lastFlushAt + Math.min(this.#batchMs, this.#lastFlushSize * FLUSH_MS_PER_CHANGE) - Date.now());
    this.#flushTimer = setTimeout(() => this.#flush(), wait);
  }

  /**
   * Send the batch, with the counts and the queues after it, as one write: formatted once for every subscriber
   * (20 open tabs cost one JSON.stringify, not 20). A subscriber that joined during the batch gets
   * only the changes after the point its own start brought it to.
   */
  #flush(): void {
    this.#flushTimer = null;
    const changes = this.#pending;
    this.#pending = [];
    if (!changes.length) return;
    this.#lastFlushAt = Date.now();
    this.#lastFlushSize = changes.length;
    const last = changes.at(-1)!.seq;
    const after = formatEvent({ event: "counts", data: { counts: this.#countsNow() } }) + (changes.some(movesQueues) ? this.#queuesIfDue() : "");
    const batch = (from: FeedChange[]) => formatEvent({ event: "changes", data: { changes: from } }, eventId(this.#generation, last)) + after;
    const shared = batch(changes);
    for (const subscriber of this.#subscribers) {
      if (subscriber.fromSeq >= last) continue;
      subscriber.send(subscriber.fromSeq < changes[0]!.seq ? shared : batch(changes.filter((change) => change.seq > subscriber.fromSeq)));
    }
    this.#forgetEndedStuck(changes);
  }

  /**
   * A stuck request that finished, moved on or went since the monitor's pass (another program's
   * recovery timed it out, a worker picked it up) leaves the stuck count now, not at the next pass.
   */
  #forgetEndedStuck(changes: readonly FeedChange[]): void {
    if (!this.#stuckAll.length) return;
    const stateNow = new Map<string, string | null>();
    for (const change of changes) {
      if (change.kind === "request.removed") stateNow.set(change.requestId, null);
      else if (change.kind === "request.upserted" && change.request) stateNow.set(change.requestId, change.request.state);
    }
    const left = this.#stuckAll.filter((request) => !stateNow.has(request.requestId) || stateNow.get(request.requestId) === request.state);
    if (left.length !== this.#stuckAll.length) this.publishStuck(left, this.#stuck.at ?? Date.now());
  }

  #countsCache: { seq: number; counts: StateCounts } | null = null;

  #lastQueuesAt = 0;
  #queuesTimer: NodeJS.Timeout | null = null;

  /**
   * The queues event, at most once per QUEUES_EVERY_MS (a GROUP BY over the queued and processing
   * rows): now when due, else sent on its own once it is, with the queues as they are then.
   */
  #queuesIfDue(): string {
    const wait = this.#lastQueuesAt + QUEUES_EVERY_MS - Date.now();
    if (wait <= 0) {
      this.#lastQueuesAt = Date.now();
      return formatEvent({ event: "queues", data: { queues: queuesView(this.#reader, this.#stuckAll) } });
    }
    this.#queuesTimer ??= setTimeout(() => {
      this.#queuesTimer = null;
      const event = this.#queuesIfDue();
      for (const subscriber of this.#subscribers) subscriber.send(event);
    }, wait);
    return "";
  }

  /** Counts once per feed position, however many subscribers ask. */
  #countsNow(): StateCounts {
    if (this.#countsCache?.seq !== this.#lastSeq) this.#countsCache = { seq: this.#lastSeq, counts: this.#reader.countsByState() };
    return this.#countsCache.counts;
  }
}
