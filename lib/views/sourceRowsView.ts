import { toSummary } from "../db/changes";
import { resolveListFilters, type ListFilters } from "../model/listFilters";
import { TEXT_FIELDS, type RequestRecord } from "../model/requestFormat";
import { toListFilters, type RequestQuery } from "../model/requestQuery";
import type { LiveSource, SourceStatus } from "../sources/liveSource";
import type { SourceMessage, SourceStep } from "../sources/sourceMessage";
import { lifecycleFacts, type LifecycleFact } from "./lifecycleFacts";
import { timelineOf, type Timeline } from "./timelineView";
import { DISPLAY_TEXT_CHARS, type RequestDetailView, type RequestRow, type RequestsView } from "./requestsView";

/** A source's row as the requests table shows it: the folder's list row of its record (lib/db/changes.ts), why it is stuck, and its source. */
function rowOf(message: SourceMessage, source: string): RequestRow {
  return { ...toSummary(message.request), stuckReason: message.stuck, source, note: message.note };
}

/**
 * One page of a source's rows for the requests page's URL query: the same filters as the folder's
 * table, in the source's id order (newest first unless `order=asc`); "stuck only" takes the stuck
 * rows of the source's latest look.
 */
export function sourceRequestsView(source: LiveSource, query: RequestQuery, now = Date.now(), limit = 50): RequestsView {
  const stuck = query.stuck ? source.stuck().map((row) => row.requestId) : [];
  const view = sourceRows(source, toListFilters(query, now, stuck, limit), now);
  return query.stuck ? { ...view, items: view.items.filter((item) => item.stuckReason !== null) } : view;
}

/** A page of a source's rows for list filters (`reqwatch list --source`; the table's view above). */
export function sourceRows(source: LiveSource, filters: ListFilters, now = Date.now()): RequestsView {
  const page = source.page(resolveListFilters(filters), now);
  return { items: page.items.map((message) => rowOf(message, source.name)), nextCursor: page.nextCursor };
}

/** A source's row on its own page: the record as mapped (texts cut as for any request), why it is stuck, and the source. */
export interface SourceRequestView {
  source: SourceStatus;
  request: RequestRecord;
  truncated: RequestDetailView["truncated"];
  stuckReason: string | null;
  note: string | null;
  /** The row as its owner stores it, long texts cut (they are whole under Content). */
  stored: Record<string, unknown> | null;
  /** Who keeps `stored`: the source's owner, or reqwatch (what it received or saw). */
  storedBy: "owner" | "reqwatch";
  /** What it went through, oldest first, where the source keeps that (the received telemetry's turns and calls). */
  steps: SourceStep[] | null;
  /** The received telemetry's lifecycle on a time axis: each call and tool once, nested; null for a queue's row. */
  timeline: Timeline | null;
  /** The received telemetry's lifecycle in words (times as times, nothing it does not know); null for a queue's row, whose `stored` is its owner's. */
  facts: LifecycleFact[] | null;
}

/** A stored column's value on the row's page: texts cut at this many characters. */
const STORED_CHARS = 2000;

export function sourceRequestView(source: LiveSource, requestId: string, now = Date.now()): SourceRequestView | null {
  const message = source.get(requestId, now);
  if (!message) return null;
  const truncated: SourceRequestView["truncated"] = {};
  const request = { ...message.request };
  for (const field of TEXT_FIELDS) {
    const text = request[field];
    if (typeof text === "string" && text.length > DISPLAY_TEXT_CHARS) {
      truncated[field] = text.length;
      request[field] = text.slice(0, DISPLAY_TEXT_CHARS);
    }
  }
  const stored = message.stored
    ? Object.fromEntries(
        Object.entries(message.stored).map(([column, value]) => [
          column,
          value instanceof Uint8Array
            ? `<${value.length} bytes>`
            : typeof value === "string" && value.length > STORED_CHARS
              ? `${value.slice(0, STORED_CHARS)}…`
              : value,
        ]),
      )
    : null;
  const received = message.parts !== undefined;
  return {
    source: source.status(),
    request,
    truncated,
    stuckReason: message.stuck,
    note: message.note,
    stored,
    storedBy: message.keptByReqwatch ? "reqwatch" : "owner",
    steps: message.steps ?? null,
    timeline: received ? timelineOf(message.steps ?? [], message.parts ?? []) : null,
    facts: received && message.stored ? lifecycleFacts(message.stored) : null,
  };
}
