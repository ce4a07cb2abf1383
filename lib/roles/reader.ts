import type { TrackerContext, IndexingProgress } from "../store/context";
import type { ArchiveDb } from "../db/archive";
import type { SessionService } from "../sessions/sessionTracker";
import type { StateDir } from "../stateFiles/stateDir";
import type { Ownership, RequestPage, RequestSummary, ResolvedTrackerOptions, StuckRequest } from "../types";
import { countByState, type StateCounts } from "../db/queries/countByState";
import { getRequest } from "../db/queries/getRequest";
import { listRequests } from "../db/queries/listRequests";
import { listAllRequests } from "../db/queries/listAllRequests";
import { sessionsSeen, type SessionSeen } from "../db/queries/sessionsSeen";
import { oldestCreatedAt } from "../db/queries/oldestCreated";
import { requestFileBytes } from "../db/queries/requestFileBytes";
import { queueStats, type QueueStats } from "../db/queries/queueStats";
import { activityRows, liveStateCounts, type ActivityOptions, type ActivityRow, type LiveStateCounts } from "../db/queries/activity";
import { listWorkers, unfinishedBy, type WorkerRow } from "../db/queries/workers";
import { knownValues } from "../db/queries/knownValues";
import { listUnreadable, type UnreadableFile } from "../db/unreadableFiles";
import { responseCounts } from "../db/responseRows";
import { feedHead, feedLastSeq, readChanges, type FeedChange, type FeedHead } from "../db/changes";
import { readMeta } from "../db/openIndex";
import { backfillText } from "../db/requestText";
import { MAX_PAGE_SIZE, resolveListFilters, type ListFilters } from "../model/listFilters";
import type { RequestRecord } from "../model/requestFormat";
import { readPauses, type Pause } from "../stateFiles/pauseFile";
import { reconcileResponses } from "../responses/responseIndex";
import { findStuck } from "../monitor/monitorPass";
import { retentionStatus, type RetentionStatus } from "../actions/retention";

/** What the reader needs of the opened folder beyond the context. */
export interface ReaderParts {
  sessions: SessionService;
  archive: () => ArchiveDb;
  /** True while a follower in this process keeps the index up with the folder (the response files included). */
  follows: () => boolean;
  /** The generation the index was opened with, until it records one. */
  openedGeneration: () => string;
}

/**
 * The read model, for the pages, the CLI's lists, MCP and the exporter: lists, counts, sessions,
 * workers, activity, queues and the change feed. It changes nothing in the folder.
 */
export class FolderReader {
  readonly #ctx: TrackerContext;
  readonly #parts: ReaderParts;
  /** The sessions list and each session, as recorded. */
  readonly sessions: Pick<SessionService, "current" | "get" | "list">;

  constructor(ctx: TrackerContext, parts: ReaderParts) {
    this.#ctx = ctx;
    this.#parts = parts;
    this.sessions = parts.sessions;
  }

  get stateDir(): StateDir {
    return this.#ctx.dir;
  }

  get ownership(): Ownership {
    return this.#ctx.ownership;
  }

  get options(): ResolvedTrackerOptions {
    return this.#ctx.options;
  }

  get(requestId: string): RequestRecord | null {
    return getRequest(this.#ctx.db, requestId);
  }

  list(filters?: ListFilters): RequestPage {
    const resolved = resolveListFilters(filters);
    // Without a follower in this process (a CLI command), the response files are read in first.
    if (resolved.callbackFailed && !this.#parts.follows()) reconcileResponses(this.#ctx);
    return listRequests(this.#ctx.db, resolved);
  }

  /**
   * Every request `filters` match, in their order, `pageSize` (default 1,000) at a time, all from
   * one snapshot of the index taken at the first page: a request updated meanwhile is listed once,
   * as it was. The snapshot holds a read transaction until the last page or `return()`: read it
   * through promptly (the index's write-ahead log cannot be checkpointed past it meanwhile).
   */
  *listAll(filters: Omit<ListFilters, "limit" | "cursor"> = {}, pageSize = MAX_PAGE_SIZE): Generator<RequestSummary[], void, undefined> {
    const resolved = resolveListFilters({ ...filters, limit: pageSize, cursor: undefined });
    if (resolved.callbackFailed && !this.#parts.follows()) reconcileResponses(this.#ctx);
    // The snapshot only reads: a search's text index is filled here first, as `list` fills it.
    if (resolved.text !== undefined) while (backfillText(this.#ctx.db, 20_000) > 0);
    yield* listAllRequests(this.#ctx.dir.indexFile, resolved);
  }

  countsByState(filters: { workspace?: string; sessionId?: string } = {}): StateCounts {
    return countByState(this.#ctx.db, filters);
  }

  /**
   * The sessions requests carry (how many, first and last seen), most recently active first, or
   * only those of `ids`: a session id that requests carry is a session, recorded context or not.
   */
  sessionsSeen(options?: { ids?: readonly string[]; limit?: number }): SessionSeen[] {
    return sessionsSeen(this.#ctx.db, options);
  }

  /** When the oldest request indexed was created; null when there is none. */
  oldestCreatedAt(): number | null {
    return oldestCreatedAt(this.#ctx.db);
  }

  /** The request files' total size in bytes, as indexed. */
  requestFileBytes(): number {
    return requestFileBytes(this.#ctx.db);
  }

  /** A gateway's response files in the index (lib/responses). */
  responseCounts(): { files: number; unreadable: number; callbackFailed: number } {
    return responseCounts(this.#ctx.db);
  }

  unreadableFiles(): UnreadableFile[] {
    return listUnreadable(this.#ctx.db);
  }

  /** The index's feed generation: changes when the index is rebuilt. */
  generation(): string {
    return readMeta(this.#ctx.db, "generation") ?? this.#parts.openedGeneration();
  }

  /** Each workspace with work queued or processing: how much, and since when the oldest has waited. */
  queueStats(): QueueStats[] {
    return queueStats(this.#ctx.db);
  }

  /** The paused workspaces, by name. */
  pauses(): Pause[] {
    return readPauses(this.#ctx.dir);
  }

  /** The activity rollups' rows over a range (lib/db/queries/activity.ts) and the live states' counts now: the charts. */
  activity(options: ActivityOptions): { rows: ActivityRow[]; live: LiveStateCounts } {
    return { rows: activityRows(this.#ctx.db, options), live: liveStateCounts(this.#ctx.db, options.match) };
  }

  /** Every worker process seen in the claims indexed (most recently seen first), with what it did and holds. */
  workers(limit?: number): WorkerRow[] {
    return listWorkers(this.#ctx.db, limit);
  }

  /** The requests a worker held and did not finish, newest first. */
  unfinishedBy(
    worker: { pid: number; host: string | null; processStartedAt: number | null },
    limit?: number,
  ): { requestId: string; claimedAt: number; outcome: string | null }[] {
    return unfinishedBy(this.#ctx.db, worker, limit);
  }

  /** Up to `limit` (default 20) known workspaces or session ids starting with `prefix`, in order (the filters' suggestions). */
  knownValues(field: "workspace" | "session", prefix = "", limit = 20): string[] {
    return knownValues(this.#ctx.db, field, prefix, limit);
  }

  /** What is stuck now (read-only; the same rules as the monitor). */
  stuck(): StuckRequest[] {
    return findStuck(this.#ctx);
  }

  /** The retention's settings, whether it acts on this folder, and its latest runs (by any process). */
  retention(): RetentionStatus {
    return retentionStatus(this.#ctx, this.#parts.archive);
  }

  /** Changes after `afterSeq`, oldest first (the change feed). */
  changesSince(afterSeq: number, limit?: number): FeedChange[] {
    return readChanges(this.#ctx.db, afterSeq, limit);
  }

  /** Where the change feed starts and ends. */
  feedHead(): FeedHead {
    return feedHead(this.#ctx.db);
  }

  /** The newest change's number (cheap: for polling). */
  feedLastSeq(): number {
    return feedLastSeq(this.#ctx.db);
  }

  /** With `rebuild: "in-background"`: how far the rebuild of the index from the files is; null when the index is complete. */
  indexing(): IndexingProgress | null {
    return this.#ctx.indexing ? { ...this.#ctx.indexing } : null;
  }
}

/** The reader as its callers take it: its members, whatever object holds them (a test's all-in-one service too). */
export type Reader = Pick<FolderReader, keyof FolderReader>;
