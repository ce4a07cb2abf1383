import fs from "node:fs";
import { BulkActions } from "../actions/bulkActions";
import { backfillText } from "../db/requestText";
import { Sessions } from "../sessions/sessionTracker";
import { archiveReplaced, openArchive, type ArchiveDb } from "../db/archive";
import { retentionInactiveReason } from "../actions/retention";
import { commitChange } from "../store/commitChange";
import { withWritersLock } from "../db/writeLock";
import { inRebuild, type TrackerContext } from "../store/context";
import { IndexHandle } from "../store/indexHandle";
import { discardSpares } from "../fs/durableWrite";
import { assertRequestId } from "../model/ids";
import { getRequest } from "../db/queries/getRequest";
import { listRequests } from "../db/queries/listRequests";
import { indexProblem, startIndexGuard, type IndexCheck, type IndexGuardHandle } from "../recovery/indexGuard";
import { fileIdentity, indexedDownTo, readMeta, removeIndexFiles, type FileIdentity, type IndexDb } from "../db/openIndex";
import type { IndexLoss } from "../db/writeLock";
import { resolveListFilters, type ListFilters } from "../model/listFilters";
import type {
  ChangeInput,
  CreateInput,
  MonitorOptions,
  MonitorWithRetention,
  Ownership,
  RecoveryReport,
  RequestPage,
  ResolvedTrackerOptions,
  Tracker,
} from "../types";
import { recover } from "../recovery/recover";
import { rebuildOnThread } from "../recovery/backgroundRebuild";
import { monitorPass } from "../monitor/monitorPass";
import { startMonitorWithRetention } from "../monitor/startMonitor";
import { claimNext } from "../queue/claimNext";
import { complete, fail, heartbeat } from "../queue/deliver";
import { Waiters } from "../queue/waiters";
import { FolderIngest, type IngestHandle, type IngestOptions } from "../ingest/folderIngest";
import { feedLastSeq, requestsChangedSince } from "../db/changes";
import { indexedAsIs, ingestChangedSince, ingestRequests, reconcile } from "../recovery/reconcile";
import { followerRebuilt, syncWithFollower } from "../ingest/followerSync";
import { startCheckpoints } from "../db/checkpoints";
import type { RequestRecord } from "../model/requestFormat";
import { BACKGROUND_FROM_FILES, ensureStateDir, holdsAtLeast, type StateDir } from "../stateFiles/stateDir";
import { openStateDir } from "../store/ownership";
import { recordResult } from "../queue/recordResult";
import { creation, updating } from "../queue/requestWrites";
import { FolderReader } from "./reader";
import { FolderOperator } from "./operator";
import type { Recording, Upkeep } from "./recording";

/** A file's times may pass its modification time by this much (the file system stamps it from a coarser clock). */
const MTIME_SLACK_MS = 1000;

function sameIdentity(a: FileIdentity | null, b: FileIdentity | null): boolean {
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;
}

/**
 * One state folder opened for recording (`openTracker`, `openRoles` in lib/tracker.ts): its index
 * handle and archive, the background parts it started (monitors, ingests, index guards), and the
 * reopening of a lost index, which restarts what watched the old one. It hands out the tracker,
 * the reader, the operator and the upkeep; the tracker and the upkeep are plain objects holding
 * exactly their published members.
 */
export class OpenFolder implements Recording {
  readonly tracker: Tracker;
  readonly reader: FolderReader;
  readonly operator: FolderOperator;
  readonly upkeep: Upkeep;
  /** The tracker's `close`; its own property, as the programs take it apart (`const { reader, close } = openRoles(...)`). */
  readonly close = (): void => this.#close();

  readonly #dir: StateDir;
  readonly #options: ResolvedTrackerOptions;
  readonly #index: IndexHandle;
  readonly #waiters: Waiters;
  readonly #ctx: TrackerContext;
  readonly #sessions: Sessions;
  readonly #monitors = new Set<MonitorWithRetention>();
  /** Each ingest this folder started, with how to restart it on a reopened index (its watchers were on the old folders). */
  readonly #ingests = new Map<IngestHandle, () => void>();
  readonly #guards = new Set<IndexGuardHandle>();
  #archiveDb: ArchiveDb | null = null;
  readonly #retiredArchives = new Set<ArchiveDb>();
  /** Connections a writer's reopen replaced: code up the stack may still hold one, so each is closed once the call has returned. */
  readonly #retired = new Set<IndexDb>();
  /** Every file was just read into the index (a rebuild or a recovery): a refresh right after has nothing to find. */
  #readEveryFile = false;
  /** A reopen a write made (the guard reports it at its next check), and how long it took. */
  #reopenedByWriter: { loss: IndexLoss; durationMs: number } | null = null;
  /** Aborted by `close()`: a rebuild under way stops. */
  readonly #stopping = new AbortController();
  readonly #stopCheckpoints: () => void;

  constructor(resolved: ResolvedTrackerOptions) {
    const { dir, ownership } = openStateDir(resolved.stateDir, resolved);
    ensureStateDir(dir);
    const index = new IndexHandle(dir.indexFile);
    const waiters = new Waiters(() => index.db);
    this.#dir = dir;
    this.#options = resolved;
    this.#index = index;
    this.#waiters = waiters;
    this.#ctx = Object.freeze({
      dir,
      ownership,
      get db() {
        return index.db;
      },
      get indexing() {
        return index.indexing;
      },
      keeper: { lost: () => this.#lostIndex(), reopen: (loss: IndexLoss) => this.#reopenInWrite(loss) },
      options: resolved,
      now: resolved.now,
      onCommit: (request: RequestRecord) => waiters.notify(request),
    });
    this.#sessions = new Sessions(this.#ctx);
    const openReport = this.#catchUp(resolved.recover, resolved.rebuild);
    this.#stopCheckpoints = startCheckpoints(() => this.#ctx.db, `${dir.indexFile}-wal`);

    const archive = () => this.#archive();
    const sessions = this.#sessions;
    const actions = new BulkActions(this.#ctx, archive);
    this.reader = new FolderReader(this.#ctx, { sessions, archive, follows: () => this.#ingests.size > 0, openedGeneration: () => index.generation });
    this.operator = new FolderOperator(this.#ctx, { sessions, archive, actions, stopping: this.#stopping.signal });
    this.tracker = this.#trackerOf(ownership, openReport);
    this.upkeep = this.#upkeepOf();
  }

  /** The library's calls: these members and no others, so what is published is what can be called. */
  #trackerOf(ownership: Ownership, openReport: RecoveryReport | null): Tracker {
    const ctx = this.#ctx;
    return {
      ownership,
      sessions: this.#sessions,
      options: this.#options,
      openReport,

      rebuildIndex: () => this.#rebuildIndex(),
      indexing: () => this.reader.indexing(),
      create: (input) => this.#create(input),
      transition: (requestId, to, extra = {}) => this.#update(requestId, { ...extra, to }),
      update: (requestId, change) => this.#update(requestId, change),
      get: (requestId) => this.reader.get(requestId),
      list: (filters) => this.reader.list(filters),
      claimNext: (options) => claimNext(ctx, options),
      heartbeat: (requestId, token) => heartbeat(ctx, requestId, token),
      recordResult: (requestId, token, result) => recordResult(ctx, requestId, token, result),
      complete: (requestId, token, result, by) => complete(ctx, requestId, token, result, by),
      fail: (requestId, token, error, options) => fail(ctx, requestId, token, error, options),
      waitForResult: (requestId, { timeoutMs }) => this.#waiters.wait(requestId, getRequest(ctx.db, requestId), timeoutMs),
      startMonitor: (options = {}) => this.#startMonitor(options),
      close: () => this.#close(),
    };
  }

  #upkeepOf(): Upkeep {
    return {
      refresh: (ids) => this.#refresh(ids),
      listBeforeIndexed: (filters) => this.#listNewestFirst(filters),
      startIngest: (options) => this.#startIngest(options),
      checkIndex: () => this.#checkIndex(),
      startIndexGuard: (options = {}) => {
        const handle = startIndexGuard(() => this.#checkIndex(), { now: this.#ctx.now, ...options });
        this.#guards.add(handle);
        return handle;
      },
      rebuildIndex: () => this.#rebuildIndex(),
      backfillTextIndex: (rows = 1000) => withWritersLock(this.#ctx, () => backfillText(this.#ctx.db, rows)),
      refreshSessions: (ids) => this.#sessions.reconcile(ids),
      pendingWaits: () => this.#waiters.size,
    };
  }

  #close(): void {
    this.#stopping.abort();
    this.#stopCheckpoints();
    for (const monitor of this.#monitors) monitor.stop();
    for (const ingest of this.#ingests.keys()) ingest.stop();
    for (const guard of this.#guards) guard.stop();
    this.#waiters.close();
    this.#ctx.db.close();
    this.#closeRetired();
    this.#archiveDb?.close();
    discardSpares();
  }

  #create(input: CreateInput): RequestRecord {
    const { requestId, step } = creation(input, this.#ctx.now);
    return commitChange(this.#ctx, requestId, step)!;
  }

  #update(requestId: string, change: ChangeInput): RequestRecord {
    return commitChange(this.#ctx, requestId, updating(requestId, change, this.#ctx.now).step)!;
  }

  #startMonitor(options: Partial<MonitorOptions>): MonitorWithRetention {
    const { retention: withRetention = true, ...loopOptions } = options;
    const retention = withRetention && retentionInactiveReason(this.#ctx) === null ? () => this.operator.runRetention() : null;
    const started = startMonitorWithRetention(() => monitorPass(this.#ctx), retention, { intervalMs: this.#options.monitorIntervalMs, ...loopOptions });
    const handle: MonitorWithRetention = {
      ...started,
      stop: () => {
        started.stop();
        this.#monitors.delete(handle);
      },
    };
    this.#monitors.add(handle);
    return handle;
  }

  /** archive.db, reopened when the file at its path is no longer the one open (deleted or replaced): what is archived goes where a restart finds it. */
  #archive(): ArchiveDb {
    if (this.#archiveDb && archiveReplaced(this.#archiveDb)) {
      // A caller up the stack may still hold it (an audit entry being finished): closed once the call has returned.
      this.#retiredArchives.add(this.#archiveDb);
      setImmediate(() => this.#closeRetired()).unref();
      this.#archiveDb = null;
    }
    return (this.#archiveDb ??= openArchive(this.#dir.archiveFile));
  }

  /**
   * Bring the just-opened index up to date: an index that must be rebuilt is rebuilt even without
   * `withRecovery`; only recovery changes states (times out stuck processing requests).
   */
  #catchUp(withRecovery: boolean, when: "at-open" | "in-background" = "at-open"): RecoveryReport | null {
    const index = this.#index;
    if (index.needsRebuild && !withRecovery && when === "in-background" && holdsAtLeast(this.#dir.requestsDir, BACKGROUND_FROM_FILES)) {
      index.leaveRebuild(this.#ctx.now());
      return null;
    }
    const report =
      withRecovery || index.needsRebuild
        ? recover(index.needsRebuild ? inRebuild(this.#ctx) : this.#ctx, this.#sessions, {
            processingStuckAfterMs: withRecovery ? this.#options.processingStuckAfterMs : null,
          })
        : null;
    this.#readEveryFile = report !== null;
    return report;
  }

  /** Reopen a lost index (rebuilding it from the files when it is new) and the archive with it. */
  #checkIndex(): IndexCheck {
    const started = performance.now();
    const dir = this.#dir;
    const problem = indexProblem(dir, this.#ctx.db, this.#index.identity);
    if (!problem || problem.kind === "dir-missing") {
      // A writer reopened it since the last check: reported here, where what watched the old index restarts.
      const earlier = this.#reopenedByWriter;
      this.#reopenedByWriter = null;
      if (!earlier || problem) return { problem, reopened: false, durationMs: performance.now() - started };
      this.#restartIngests();
      return { problem: earlier.loss, reopened: true, durationMs: earlier.durationMs };
    }
    this.#reopenedByWriter = null;
    // Deleted or replaced: open what is there now (another process may have made it). Corrupt: start over, unless another process has already.
    if (problem.kind === "corrupt" && sameIdentity(fileIdentity(dir.indexFile), this.#index.identity)) removeIndexFiles(dir.indexFile);
    ensureStateDir(dir);
    this.#index.reopen().close();
    this.#archiveDb?.close();
    this.#archiveDb = null;
    this.#catchUp(false);
    this.#restartIngests();
    return { problem, reopened: true, durationMs: performance.now() - started };
  }

  #restartIngests(): void {
    for (const restart of this.#ingests.values()) restart();
  }

  /** Asked under the writers' lock before each write: is ctx.db still the file at index.db's path? One stat. */
  #lostIndex(): IndexLoss | null {
    const now = fileIdentity(this.#dir.indexFile);
    if (!now) {
      // The whole state directory gone: the write fails as it would have, and the guard waits for the folder.
      if (!fs.existsSync(this.#dir.root)) return null;
      return { kind: "deleted", message: "index.db was deleted" };
    }
    if (!sameIdentity(now, this.#index.identity)) return { kind: "replaced", message: "index.db was replaced by another file" };
    return null;
  }

  /**
   * A writer found its index lost (deleted, replaced, or damaged under a write): open the one at
   * index.db's path before writing. The writes this process made to the lost file after it was
   * lost are in the request files: a new index is rebuilt from them, one another process made is
   * reconciled with them. (Opening takes the writers' lock: a write another process began on the
   * lost file before it was lost has renamed its file by then, so the rebuild reads it too.)
   */
  #reopenInWrite(loss: IndexLoss): void {
    const started = performance.now();
    // Damaged: start over, unless another process has replaced the file already (its index is kept).
    if (loss.kind === "corrupt" && sameIdentity(fileIdentity(this.#dir.indexFile), this.#index.identity)) removeIndexFiles(this.#dir.indexFile);
    ensureStateDir(this.#dir);
    this.#retired.add(this.#index.reopen());
    setImmediate(() => this.#closeRetired()).unref();
    if (this.#index.needsRebuild) this.#catchUp(false);
    else reconcile(this.#ctx);
    this.#reopenedByWriter = { loss, durationMs: performance.now() - started };
  }

  #closeRetired(): void {
    for (const db of [...this.#retired, ...this.#retiredArchives]) {
      try {
        db.close();
        this.#retired.delete(db);
        this.#retiredArchives.delete(db);
      } catch {
        // Still in use (a statement being iterated): the next pass closes it.
      }
    }
  }

  #refresh(ids: readonly string[] | undefined): void {
    // The request files alone: sessions and response files have their own reads where they are shown.
    if (!ids) {
      // A follower that watched every change since it caught up vouches for the index; else every file is checked.
      if (this.#readEveryFile) this.#readEveryFile = false;
      else if (this.#ctx.indexing && !followerRebuilt(this.#ctx.db, this.#dir)) {
        // Opened with the rebuild left for later, and no follower builds it: every file is read here.
        this.#index.complete();
        this.#catchUp(false);
      } else if (!syncWithFollower(this.#dir)) reconcile(this.#ctx);
      this.#index.complete();
      return;
    }
    for (const id of ids) assertRequestId(id);
    const changed = ids.filter((id) => !indexedAsIs(this.#ctx, id));
    if (changed.length) ingestRequests(this.#ctx, changed);
  }

  #startIngest(options: IngestOptions | undefined): IngestHandle {
    let current = new FolderIngest(this.#ctx, this.#sessions, options);
    const handle: IngestHandle = {
      caughtUp: current.caughtUp,
      status: () => current.status(),
      flush: () => current.flush(),
      stop: () => {
        current.stop();
        this.#ingests.delete(handle);
      },
    };
    this.#ingests.set(handle, () => {
      current.stop();
      current = new FolderIngest(this.#ctx, this.#sessions, options);
    });
    return handle;
  }

  async #rebuildIndex(): Promise<RecoveryReport | null> {
    const ctx = this.#ctx;
    if (!ctx.indexing) return null;
    const progress = ctx.indexing;
    const fromSeq = feedLastSeq(ctx.db);
    const stopping = this.#stopping.signal;
    // Without the bundle's thread script (the sources run directly), here and now. A failure
    // leaves `indexing` as it is (the index is not marked complete): a later call tries again.
    const report = (await rebuildOnThread(ctx, progress, stopping)) ?? (stopping.aborted ? null : this.#catchUp(false));
    if (!report || stopping.aborted) return null;
    // What reqwatch writers changed while it ran (the feed names them), read again as it is now.
    ingestRequests(ctx, requestsChangedSince(ctx.db, fromSeq));
    this.#index.complete();
    return report;
  }

  /**
   * A page of `list` on an index not built yet: the files are read newest first (by modification
   * time) until no file still unread could enter the page, which holds when a file's times are at
   * most its modification time (its writer set them, then wrote it), give or take the file
   * system's clock tick (MTIME_SLACK_MS). Read to the end, the index is complete; stopped before,
   * it stays unfinished for the next open (or a follower) to complete, its rows a page can be settled on.
   */
  #listNewestFirst(filters: ListFilters): RequestPage {
    const ctx = this.#ctx;
    if (!ctx.indexing) return this.reader.list(filters);
    const wanted = resolveListFilters(filters);
    const key = wanted.sort === "createdAt" ? "createdAt" : "lastUpdatedAt";
    // Ascending orders, a text search (its index is filled at the end) and callbacks (read from other files) need every file.
    const early = wanted.order === "desc" && wanted.text === undefined && !wanted.callbackFailed;
    const settled = (unreadNewestMtimeMs: number) => {
      if (!early) return false;
      const { items } = listRequests(ctx.db, wanted);
      const last = items.at(-1);
      return items.length === wanted.limit && last !== undefined && last[key] > unreadNewestMtimeMs + MTIME_SLACK_MS;
    };
    // What an earlier command or a follower already indexed, newest first, may hold the page, once the files changed since are read.
    const known = indexedDownTo(ctx.db);
    if (known && settled(known.belowMs)) {
      ingestChangedSince(ctx, known.listedAt - MTIME_SLACK_MS);
      if (settled(known.belowMs)) return this.reader.list(filters);
    }
    recover(inRebuild(ctx, { newestFirst: true, onProgress: () => {}, settled }), this.#sessions, { processingStuckAfterMs: null });
    if (readMeta(ctx.db, "reconciled_at") !== undefined) {
      this.#index.complete();
      this.#readEveryFile = true;
    }
    return this.reader.list(filters);
  }
}
