import { QueryClient } from "@tanstack/react-query";
import { createParser } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { cacheUpdateFor, writeCacheUpdate } from "../../components/data/feedReducer";
import { auditKeys, requestKeys, sessionKeys, sourceKeys, statusKeys } from "../../components/data/queries";
import { FeedHub } from "../../lib/dashboard/feedHub";
import { formatEvent, readFeedEvent, type FeedEvent, type FeedEventName } from "../../lib/dashboard/feedEvents";
import { DEFAULT_QUERY, type RequestQuery } from "../../lib/model/requestQuery";
import { STATES, type State } from "../../lib/model/states";
import type { SourceStatus } from "../../lib/sources/liveSource";
import { requestDetailView, requestsView, type RequestDetailView, type RequestsView } from "../../lib/views/requestsView";
import type { Reader } from "../../lib/roles/reader";
import { aClock } from "../helpers/clock";
import { aRecording } from "../helpers/stateDir";

/** What the hub writes to one subscriber, read back as the browser's EventSource and useFeedConnection read it. */
function aBrowserOn(hub: FeedHub, since: string | null = null): FeedEvent[] {
  const events: FeedEvent[] = [];
  const parser = createParser({ onEvent: (message) => events.push(readFeedEvent(message.event as FeedEventName, message.data)) });
  hub.subscribe(since, (chunk) => parser.feed(chunk));
  return events;
}

/** A cache holding what the server rendered for these table pages. */
function aCacheWith(reader: Reader, queries: RequestQuery[]): QueryClient {
  const cache = new QueryClient();
  for (const query of queries) cache.setQueryData(requestKeys.list(query), requestsView(reader, query, []));
  return cache;
}

const rows = (cache: QueryClient, query: RequestQuery) =>
  cache.getQueryData<RequestsView>(requestKeys.list(query))!.items.map((row) => `${row.requestId} ${row.state} ${row.stuckReason ?? "-"}`);
const invalidated = (cache: QueryClient, queryKey: readonly unknown[]) => cache.getQueryState(queryKey)?.isInvalidated;

const queuedOnly: RequestQuery = { ...DEFAULT_QUERY, states: ["queued"] };
const stuckOnly: RequestQuery = { ...DEFAULT_QUERY, stuck: true };

describe("the browser's reducer from an event of the stream to the cache", () => {
  it("a batch of changes moves rows in the cached pages, refetches the changed requests and sessions, and paces the views they move", () => {
    const clock = aClock(1_800_000_000_000);
    const { tracker, reader } = aRecording({ now: clock.now });
    tracker.create({ requestId: "a", workspace: "gw", state: "queued" });
    clock.advance(10);
    tracker.create({ requestId: "b", workspace: "gw", state: "queued", sessionId: "s1" });
    const cache = aCacheWith(reader, [DEFAULT_QUERY, queuedOnly]);
    for (const id of ["a", "b"]) cache.setQueryData(requestKeys.detail(id), requestDetailView(reader, id, []));
    cache.setQueryData(sessionKeys.detail("s1"), {});
    const shown = cache.getQueryData(requestKeys.list(DEFAULT_QUERY));

    let from = reader.feedHead().lastSeq;
    clock.advance(10);
    tracker.transition("a", "processing");
    const claimed = cacheUpdateFor(cache, { event: "changes", data: { changes: reader.changesSince(from, 100) } }, clock.now());
    // Deciding reads the cache and writes nothing.
    expect(cache.getQueryData(requestKeys.list(DEFAULT_QUERY))).toBe(shown);
    expect(claimed.refresh).toEqual(["workers", "activity", "overview"]);
    writeCacheUpdate(cache, claimed);
    expect(rows(cache, DEFAULT_QUERY)).toEqual(["a processing -", "b queued -"]);
    expect(rows(cache, queuedOnly)).toEqual(["b queued -"]);
    expect([invalidated(cache, requestKeys.detail("a")), invalidated(cache, requestKeys.detail("b")), invalidated(cache, sessionKeys.detail("s1"))]).toEqual([
      true,
      false,
      false,
    ]);

    from = reader.feedHead().lastSeq;
    clock.advance(10);
    tracker.update("b", { fields: { model: "m2" } });
    const inSession = cacheUpdateFor(cache, { event: "changes", data: { changes: reader.changesSince(from, 100) } }, clock.now());
    expect(inSession.refresh).toEqual(["activity", "overview", "sessionList"]);
    writeCacheUpdate(cache, inSession);
    expect(rows(cache, DEFAULT_QUERY)).toEqual(["b queued -", "a processing -"]);
    expect([invalidated(cache, requestKeys.detail("b")), invalidated(cache, sessionKeys.detail("s1"))]).toEqual([true, true]);
  });

  it("a reset sets the counts it carries and refetches every view of the state folder, not a source's", () => {
    const { tracker, reader } = aRecording();
    tracker.create({ requestId: "a", workspace: "gw", state: "queued" });
    const cache = aCacheWith(reader, [DEFAULT_QUERY]);
    cache.setQueryData(statusKeys.counts, { ...reader.countsByState(), queued: 7 });
    cache.setQueryData(auditKeys.list(), []);
    cache.setQueryData(sourceKeys.list(), []);
    const hub = new FeedHub(reader);
    try {
      const [reset] = aBrowserOn(hub, "not-an-id");
      expect(reset?.event).toBe("reset");
      writeCacheUpdate(cache, cacheUpdateFor(cache, reset!, Date.now()));
    } finally {
      hub.close();
    }
    expect(cache.getQueryData(statusKeys.counts)).toMatchObject({ queued: 1 });
    expect([invalidated(cache, requestKeys.list(DEFAULT_QUERY)), invalidated(cache, auditKeys.list()), invalidated(cache, sourceKeys.list())]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it("a stuck pass sets the badge and the reason on the cached rows and the open request, and refetches a stuck-only page that lacks one", () => {
    const { tracker, reader } = aRecording();
    tracker.create({ requestId: "hung", workspace: "gw", state: "processing" });
    tracker.create({ requestId: "fine", workspace: "gw", state: "queued" });
    const cache = aCacheWith(reader, [DEFAULT_QUERY, stuckOnly]);
    const detail = requestDetailView(reader, "hung", [])!;
    cache.setQueryData(requestKeys.detail("hung"), detail);
    const hub = new FeedHub(reader);
    let events: FeedEvent[];
    try {
      events = aBrowserOn(hub);
      hub.publishStuck(
        [{ requestId: "hung", workspace: "gw", state: "processing", since: detail.stateSince, cause: "no heartbeat", reason: "processing 2h; no heartbeat" }],
        Date.now(),
      );
    } finally {
      hub.close();
    }
    const stuck = events.filter((event) => event.event === "stuck").at(-1)!;
    const update = cacheUpdateFor(cache, stuck, Date.now());
    expect(update.refetchPages).toEqual([requestKeys.list(stuckOnly)[2]]);
    writeCacheUpdate(cache, update);
    expect(cache.getQueryData(statusKeys.stuck)).toMatchObject({ count: 1 });
    expect(rows(cache, DEFAULT_QUERY).sort()).toEqual(["fine queued -", "hung processing processing 2h; no heartbeat"]);
    expect(cache.getQueryData<RequestDetailView>(requestKeys.detail("hung"))?.stuckReason).toBe("processing 2h; no heartbeat");
  });

  it("a sources event refetches the pages and rows of a source that changed, named or seen in its status, and no other", () => {
    const aSource = (name: string, total: number): SourceStatus => ({
      ...{ name, kind: "sqlite", file: null, mapping: null, table: null, generation: null, retired: false, worker: null, writable: false, error: null },
      ...{
        counts: { ...(Object.fromEntries(STATES.map((state) => [state, 0])) as Record<State, number>), queued: total },
        total,
        stuck: 0,
        counting: false,
        lastWriteAt: null,
        readAt: null,
        readMs: null,
      },
    });
    const { reader } = aRecording();
    const [named, moved, still] = ["named", "moved", "still"].map((name) => ({ ...DEFAULT_QUERY, source: name }));
    const cache = aCacheWith(reader, [DEFAULT_QUERY, named!, moved!, still!]);
    cache.setQueryData(sourceKeys.list(), [aSource("named", 1), aSource("moved", 1), aSource("still", 1)]);
    for (const source of ["named", "moved", "still"]) cache.setQueryData(sourceKeys.request(source, "r1"), {});

    const now = [aSource("named", 1), aSource("moved", 2), aSource("still", 1)];
    writeCacheUpdate(cache, cacheUpdateFor(cache, { event: "sources", data: { sources: now, changed: ["named"] } }, Date.now()));
    expect(cache.getQueryData(sourceKeys.list())).toEqual(now);
    expect([named, moved, still, DEFAULT_QUERY].map((query) => invalidated(cache, requestKeys.list(query!)))).toEqual([true, true, false, false]);
    expect(["named", "moved", "still"].map((source) => invalidated(cache, sourceKeys.request(source, "r1")))).toEqual([true, true, false]);
  });

  it("both sides share one union: the server cannot send, nor the browser reduce, an event or payload the other does not know", () => {
    const cache = new QueryClient();
    // @ts-expect-error: no such event.
    expect(cacheUpdateFor(cache, { event: "hello", data: {} }, 0)).toEqual({ set: [], invalidate: [], refetchPages: [], refresh: [] });
    // @ts-expect-error: a reset carries the counts, as ready does.
    formatEvent({ event: "reset", data: { reason: "the index was rebuilt", generation: "g", seq: 1 } });
    // @ts-expect-error: no such event.
    formatEvent({ event: "hello", data: {} });
  });
});
