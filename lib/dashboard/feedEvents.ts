/**
 * The dashboard's event stream (`GET /api/events`): every event's name and payload, in one union
 * that the feed hub sends and the browser reads. Adding an event here makes the browser's reducer
 * fail to typecheck until it handles it; sending one not listed here fails on the server.
 *
 * The browser bundles this file: it imports types only, and nothing that needs Node.
 */
import type { FeedChange } from "../db/changes";
import type { StateCounts } from "../db/queries/countByState";
import type { StuckRequest } from "../types";
import type { SourceStatus } from "../sources/liveSource";
import type { IndexingProgress } from "../store/context";
import type { QueueRow } from "../views/queuesView";

/** Why a stream starts over: its resume point is not one the feed can continue from. */
export type ResetReason = "unknown event id" | "the index was rebuilt" | "too far behind";

/** The `stuck` event: the stuck monitor's latest pass, as the badge and the table's reasons show it. */
export interface StuckSnapshot {
  count: number;
  /** When the pass ran (null before the first). */
  at: number | null;
  requests: StuckRequest[];
}

/** What a retention run removed, when it ended. */
export interface RetentionRun {
  finishedAt: number;
  removed: number;
}

/** Every event the stream carries, by name. */
export interface FeedEventPayloads {
  /** A fresh stream: where the feed is and the counts there. */
  ready: { generation: string; seq: number; counts: StateCounts };
  /** The stream could not resume (or the index was rebuilt under it): refetch everything; the counts are the new index's. */
  reset: { reason: ResetReason; generation: string; seq: number; counts: StateCounts };
  /** A batch of changes with their rows. */
  changes: { changes: FeedChange[] };
  /** The counts after a batch. */
  counts: { counts: StateCounts };
  /** The queues after a batch that moved one. */
  queues: { queues: QueueRow[] };
  stuck: StuckSnapshot;
  /** Every source's status, and which of them changed (their pages are refetched). */
  sources: { sources: SourceStatus[]; changed: string[] };
  /** How far indexing the folder is, null once complete; rows come in without feed changes. */
  indexing: { indexing: IndexingProgress | null; counts: StateCounts };
  retention: RetentionRun;
}

export type FeedEventName = keyof FeedEventPayloads;

/** One event, discriminated by its name. */
export type FeedEvent = { [Name in FeedEventName]: { event: Name; data: FeedEventPayloads[Name] } }[FeedEventName];

/** The names a browser listens for; `satisfies` keeps the list equal to the union, no more, no less. */
export const FEED_EVENT_NAMES = Object.keys({
  ready: true,
  reset: true,
  changes: true,
  counts: true,
  queues: true,
  stuck: true,
  sources: true,
  indexing: true,
  retention: true,
} satisfies Record<FeedEventName, true>) as FeedEventName[];

/** One event in the Server-Sent Events wire format, ready to write to the stream. */
export function formatEvent(message: FeedEvent, id?: string): string {
  return `${id ? `id: ${id}\n` : ""}event: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`;
}

/** An event as the browser's EventSource hands it over: the one place its JSON becomes a typed event. */
export function readFeedEvent<Name extends FeedEventName>(name: Name, data: string): FeedEvent {
  return { event: name, data: JSON.parse(data) as FeedEventPayloads[Name] } as FeedEvent;
}
