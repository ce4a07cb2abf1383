import { describe, expect, it } from "vitest";
import { toSummary, type FeedChange } from "../../lib/db/changes";
import { DEFAULT_QUERY, type RequestQuery } from "../../lib/model/requestQuery";
import { applyChangesToPage } from "../../lib/views/applyChangesToPage";
import { requestsView, type RequestsView } from "../../lib/views/requestsView";
import type { Reader } from "../../lib/roles/reader";
import { aClock } from "../helpers/clock";
import { aRecording } from "../helpers/stateDir";

/** A tracker with `n` requests, one per 10 ms, and a way to turn its latest writes into feed changes. */
function world(n: number) {
  const clock = aClock(1_800_000_000_000);
  const recording = aRecording({ now: clock.now });
  const { tracker } = recording;
  for (let i = 0; i < n; i++) {
    clock.advance(10);
    tracker.create({ requestId: `r${String(i).padStart(3, "0")}`, workspace: i % 2 ? "odd" : "even", state: "queued" });
  }
  let seq = 0;
  const changed = (id: string): FeedChange => {
    const request = tracker.get(id);
    return request
      ? { seq: ++seq, kind: "request.upserted", requestId: id, request: toSummary(request), at: clock.now() }
      : { seq: ++seq, kind: "request.removed", requestId: id, at: clock.now() };
  };
  return { clock, ...recording, changed };
}

/** The page the server would answer now, without stuck reasons. */
const server = (reader: Reader, query: RequestQuery, limit: number): RequestsView => requestsView(reader, query, [], limit);

describe("a change applied to a cached table page in the browser", () => {
  it("gives the page the server would give for updates, new requests and filters; asks only when a row left a page with more after it", () => {
    const cases = [
      // Whether each page loses a row (r003, moved up or out) while more follow it: only the server can refill it.
      { query: DEFAULT_QUERY, refetchFirst: false, refetchSecond: true },
      { query: { ...DEFAULT_QUERY, states: ["queued" as const] }, refetchFirst: false, refetchSecond: true },
      { query: { ...DEFAULT_QUERY, workspace: "odd" }, refetchFirst: false, refetchSecond: false },
      { query: { ...DEFAULT_QUERY, sort: "createdAt" as const, order: "asc" as const }, refetchFirst: false, refetchSecond: false },
    ];
    for (const { query, refetchFirst, refetchSecond } of cases) {
      const { clock, tracker, changed, reader } = world(12);
      const first = server(reader, query, 5);
      const second = server(reader, { ...query, cursor: first.nextCursor! }, 5);
      clock.advance(10);
      tracker.transition("r003", "processing");
      clock.advance(10);
      tracker.create({ requestId: "new", workspace: "odd", state: "queued" });
      const changes = [changed("r003"), changed("new")];

      for (const [page, q, refetch] of [
        [first, query, refetchFirst],
        [second, { ...query, cursor: first.nextCursor! }, refetchSecond],
      ] as const) {
        const update = applyChangesToPage(page, q, changes, clock.now(), 5);
        expect(update.refetch, JSON.stringify(q)).toBe(refetch);
        const expected = server(reader, q, 5);
        if (refetch) {
          // What the browser shows meanwhile: the server's page less the row that would move up from the next one.
          expect(update.page.items.map((r) => r.requestId)).toEqual(expected.items.slice(0, -1).map((r) => r.requestId));
        } else {
          expect(
            update.page.items.map((r) => [r.requestId, r.state]),
            JSON.stringify(q),
          ).toEqual(expected.items.map((r) => [r.requestId, r.state]));
        }
      }
    }
  });

  it("moves a full first page's last row on, with the cursor that continues after it", () => {
    const { clock, tracker, changed, reader } = world(6);
    const page = server(reader, DEFAULT_QUERY, 5);
    clock.advance(10);
    tracker.create({ requestId: "newest", workspace: "even", state: "queued" });
    const update = applyChangesToPage(page, DEFAULT_QUERY, [changed("newest")], clock.now(), 5);
    expect(update).toMatchObject({ refetch: false, page: server(reader, DEFAULT_QUERY, 5) });
  });

  it("asks the server when only it can tell (a text search), and keeps a row it already had, changed in place", () => {
    const { clock, tracker, changed, reader } = world(3);
    const query = { ...DEFAULT_QUERY, q: "anything" };
    const page: RequestsView = { items: server(reader, DEFAULT_QUERY, 5).items, nextCursor: null };
    clock.advance(10);
    tracker.transition("r001", "processing");
    expect(applyChangesToPage(page, query, [changed("r001")], clock.now()).page.items.find((r) => r.requestId === "r001")?.state).toBe("processing");
    tracker.create({ requestId: "other", workspace: "w" });
    expect(applyChangesToPage(page, query, [changed("other")], clock.now()).refetch).toBe(true);
  });

  it("leaves a page untouched, and asks nothing, for changes that do not belong on it", () => {
    const { clock, tracker, changed, reader } = world(4);
    const query = { ...DEFAULT_QUERY, workspace: "even" };
    const page = server(reader, query, 5);
    clock.advance(10);
    tracker.transition("r001", "processing");
    expect(applyChangesToPage(page, query, [changed("r001")], clock.now())).toEqual({ page, refetch: false });
  });
});
