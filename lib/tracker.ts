import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { BulkActions, type Actions } from "./actions/bulkActions";
import { pauseWorkspace, resumeWorkspace, type PauseOptions, type PauseOutcome } from "./actions/queuePause";
import { readPauses, type Pause } from "./files/pauseFile";
import { queueStats, type QueueStats } from "./db/queries/queueStats";
import { activityRows, liveStateCounts, type ActivityOptions, type ActivityRow, type LiveStateCounts } from "./db/queries/activity";
import { knownValues } from "./db/queries/knownValues";
import { listWorkers, unfinishedBy, type WorkerRow } from "./db/queries/workers";
import { sessionsSeen, type SessionSeen } from "./db/queries/sessionsSeen";
import { oldestCreatedAt } from "./db/queries/oldestCreated";
import { backfillText } from "./db/requestText";
import { Sessions, type SessionTracker } from "./sessions/sessionTracker";
import { openArchive, type ArchiveDb } from "./db/archive";
import { cleanup, restore, type CleanupOptions, type CleanupReport } from "./cleanup/cleanup";
import { commitChange } from "./store/commitChange";
import { withWritersLock } from "./db/writeLock";
import type { IndexingProgress, TrackerContext } from "./store/context";
import { ReqwatchError } from "./model/errors";
import { discardSpares } from "./fs/durableWrite";
import { assertRequestId, assertWorkspace } from "./model/ids";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./model/jsonStructure";
import { countByState, type StateCounts } from "./db/queries/countByState";
import { getRequest } from "./db/queries/getRequest";
import { listRequests, type RequestPage } from "./db/queries/listRequests";
import { listUnreadable, type UnreadableFile } from "./db/unreadableFiles";
import { indexIdentity, indexProblem, startIndexGuard, type IndexCheck, type IndexGuardHandle } from "./recovery/indexGuard";
import { openIndex, readMeta, removeIndexFiles } from "./db/openIndex";
import { resolveListFilters, type ListFilters } from "./model/listFilters";
import { resolveTrackerOptions, type ResolvedTrackerOptions, type TrackerOptions } from "./store/options";
import { recover, type RecoveryReport } from "./recovery/recover";
import { rebuildOnThread } from "./recovery/backgroundRebuild";
import { reconcileResponses } from "./responses/responseIndex";
import { responseCounts } from "./db/responseRows";
import { findStuck, monitorPass, type MonitorPass, type StuckRequest } from "./monitor/monitorPass";
import { startMonitorLoop, type MonitorHandle, type MonitorLoopOptions } from "./monitor/startMonitor";
import { claimNext, type Claim, type ClaimOptions } from "./queue/claimNext";
import { complete, fail, heartbeat, type CompleteResult, type Delivery, type FailOptions } from "./queue/deliver";
import { writeResultMarker } from "./files/resultMarker";
import { retry, type RetryOptions, type RetryReport, type RetryTarget } from "./queue/retry";
import { Waiters } from "./queue/waiters";
import { cancel, type CancelOptions, type CancelReport } from "./queue/cancel";
import { startIngest, type IngestHandle, type IngestOptions } from "./ingest/startIngest";
import { activeTraceparent } from "./process/activeTrace";
import { feedHead, feedLastSeq, readChanges, requestsChangedSince, type FeedChange, type FeedHead } from "./db/changes";
import { ingestRequests } from "./recovery/reconcile";
import { startCheckpoints } from "./db/checkpoints";
import { describeZodError, requestFieldsSchema, type RequestFields, type RequestRecord } from "./model/requestFormat";
import { ensureStateDir, type StateDir } from "./files/stateDir";
import { assertManaged, openStateDir, type Ownership } from "./store/ownership";
import type { State } from "./model/states";
import { applyChange, newRequest, type Change, type NewRequestInput } from "./model/transition";
import { redactField, redactRequestFields, type Redaction } from "./model/redaction";

export interface CreateInput extends RequestFields {
  /** Default: a random UUID. */
  requestId?: string;
  workspace: string;
  state?: NewRequestInput["state"];
  reason?: string;
  by?: string;
}

/** A change, or a function of the current request that returns one (for read-modify-write). */
export type ChangeInput = Change | ((current: RequestRecord) => Change);

export interface Tracker {
  readonly stateDir: StateDir;
  /**
   * Managed (reqwatch created or adopted the folder, and writes there) or observed (another
   * program's folder: read, never written; every write is refused with READ_ONLY), and why.
   */
  readonly ownership: Ownership;
  readonly options: ResolvedTrackerOptions;
  /**
   * The recovery report of `open`; with `recover: false`, the report of the index rebuild if one
   * was needed (no hung requests timed out), else null.
   */
  readonly openReport: RecoveryReport | null;
  create(input: CreateInput): RequestRecord;
  /** Move a request to `to` (checked against the transition table), optionally setting fields. */
  transition(requestId: string, to: State, extra?: Omit<Change, "to">): RequestRecord;
  /** Set fields and/or change state; a function receives the current request under the writers' lock. */
  update(requestId: string, change: ChangeInput): RequestRecord;
  get(requestId: string): RequestRecord | null;
  list(filters?: ListFilters): RequestPage;
  countsByState(filters?: { workspace?: string; sessionId?: string }): StateCounts;
  /**
   * The sessions requests carry (how many, first and last seen), most recently active first, or
   * only those of `ids`: a session id that requests carry is a session, recorded context or not.
   */
  sessionsSeen(options?: { ids?: readonly string[]; limit?: number }): SessionSeen[];
  /** When the oldest request indexed was created; null when there is none. */
  oldestCreatedAt(): number | null;
  /** A gateway's response files in the index (lib/responses). */
  responseCounts(): { files: number; unreadable: number; callbackFailed: number };
  unreadableFiles(): UnreadableFile[];
  /** The index's feed generation: changes when the index is rebuilt. */
  generation(): string;
  recover(options?: { hungAfterMs?: number }): RecoveryReport;
  cleanup(options?: Partial<CleanupOptions>): CleanupReport;
  restore(requestId: string): RequestRecord;

  /** Claim the oldest ready `queued` request (see lib/queue/claimNext.ts). Null when none is ready. */
  claimNext(options?: ClaimOptions): Claim | null;
  /** Renew a claim; false when the token is no longer current (stop: the result will be dropped). */
  heartbeat(requestId: string, token: string): boolean;
  /** Write the result marker, so a crash before `complete` loses nothing (runWorker does this). */
  recordResult(requestId: string, token: string, result: { outcome: "completed"; fields?: RequestFields } | { outcome: "failed"; error: string; retryable?: boolean }): void;
  complete(requestId: string, token: string, result?: CompleteResult, by?: string): Delivery;
  fail(requestId: string, token: string, error: string, options?: FailOptions): Delivery;
  /** A person's retry of ids or of every request matching a filter; `dryRun` reports exactly what would change. */
  retry(target: RetryTarget, options?: RetryOptions): RetryReport;
  /** A person's cancel: created, queued or processing requests go to `failed`, reason `cancelled`; a worker's late result is dropped. */
  cancel(requestIds: readonly string[], options?: CancelOptions): CancelReport;
  /**
   * Pause a workspace's queue: no claim takes from it (work already claimed finishes), its wait is
   * not stuck. Durable (a file in the state folder), audited; refused in an observed folder.
   */
  pause(workspace: string, options?: PauseOptions): PauseOutcome;
  /** Resume a paused workspace; false when it was not paused. */
  resume(workspace: string, options?: { by?: string }): boolean;
  /** The paused workspaces, by name. */
  pauses(): Pause[];
  /** Each workspace with work queued or processing: how much, and since when the oldest has waited. */
  queueStats(): QueueStats[];
  /** The activity rollups' rows over a range (lib/db/queries/activity.ts) and the live states' counts now: the charts. */
  activity(options: ActivityOptions): { rows: ActivityRow[]; live: LiveStateCounts };
  /** Every worker process seen in the claims indexed (most recently seen first), with what it did and holds. */
  workers(limit?: number): WorkerRow[];
  /** The requests a worker held and did not finish, newest first. */
  unfinishedBy(worker: { pid: number; host: string | null; processStartedAt: number | null }, limit?: number): { requestId: string; claimedAt: number; outcome: string | null }[];
  /** Up to `limit` (default 20) known workspaces or session ids starting with `prefix`, in order (the filters' suggestions). */
  knownValues(field: "workspace" | "session", prefix?: string, limit?: number): string[];
  /** What is stuck now (read-only; the same rules as the monitor). */
  stuck(): StuckRequest[];
  /** One pass of the stuck monitor. */
  monitorPass(): MonitorPass;
  /** Run the monitor every `monitorIntervalMs` until `stop()` or `close()`. */
  startMonitor(options?: Partial<MonitorLoopOptions>): MonitorHandle;
  /** Resolves when the request reaches a terminal state, by any process; rejects with TimeoutError after `timeoutMs`. */
  waitForResult(requestId: string, options: { timeoutMs: number }): Promise<RequestRecord>;
  /** Waits not yet settled. */
  pendingWaits(): number;
  /** Watch the state directory for writers that are not ours, and reconcile it periodically; restarted when `checkIndex` reopens the index. */
  startIngest(options?: IngestOptions): IngestHandle;
  /** Changes after `afterSeq`, oldest first (the change feed). */
  changesSince(afterSeq: number, limit?: number): FeedChange[];
  /** Where the change feed starts and ends. */
  feedHead(): FeedHead;
  /** The newest change's number (cheap: for polling). */
  feedLastSeq(): number;
  /** After an index rebuild: fill up to `rows` rows of the text index; returns how many remain (0: done). A search finishes it itself. */
  backfillTextIndex(rows?: number): number;
  /**
   * Whether the index is still the state directory's index.db and readable; if it was deleted,
   * replaced or corrupted, reopen it (rebuilt from the files). A missing state directory is
   * reported and left for its owner to recreate.
   */
  checkIndex(): IndexCheck;
  /** `checkIndex` every `intervalMs` (default 1 s) in a long-lived process; `onReopened` is told the cause after a reopen. */
  startIndexGuard(options?: { intervalMs?: number; onReopened?: (cause: string) => void; onError?: (error: unknown) => void }): IndexGuardHandle;
  /** The session tracker: sessions/<id>.json, their index, their feed changes. */
  readonly sessions: SessionTracker;
  /** Bulk actions with dry runs, progress, the audit log and undo (the dashboard's actions). */
  readonly actions: Actions;
  /** With `rebuild: "in-background"`: how far the rebuild of the index from the files is; null when the index is complete. */
  indexing(): IndexingProgress | null;
  /**
   * With `rebuild: "in-background"`: run the rebuild the open left to do on a thread of its own,
   * newest files first, while this one goes on (reads see each batch as it commits). Its report;
   * null when there was none to do, or the tracker closed first (the next open rebuilds).
   */
  rebuildIndex(): Promise<RecoveryReport | null>;
  close(): void;
}

function validateFields(fields: RequestFields | undefined): RequestFields | undefined {
  if (fields === undefined) return undefined;
  const parsed = requestFieldsSchema.safeParse(fields);
  if (!parsed.success) throw new ReqwatchError("BAD_INPUT", `Invalid request fields: ${describeZodError(parsed.error)}`);
  // What the reader would refuse is never written: nesting it cannot rewrite.
  if (nestedDeeperThan(parsed.data)) throw new ReqwatchError("BAD_INPUT", `Invalid request fields: nested more than ${MAX_JSON_DEPTH} levels deep`);
  return parsed.data;
}

/** Only the public parts of a change: claims, notes and managed fields are the tracker's own. */
function validateChange({ to, fields, reason, by }: Change): Change {
  return { to, fields: validateFields(fields), reason, by };
}

type WorkerResult = Parameters<Tracker["recordResult"]>[2];

/** A result marker is a file too: its text is redacted as the request's will be. */
function redactResult(redaction: Redaction, result: WorkerResult): WorkerResult {
  if (result.outcome === "failed") return { ...result, error: redactField(redaction, "error", result.error) };
  return result.fields ? { ...result, fields: redactRequestFields(redaction, result.fields) } : result;
}

/** Fewer files than this are indexed at open even with `rebuild: "in-background"`: it takes a fraction of a second. */
const BACKGROUND_REBUILD_FROM = 2000;

/** Whether a folder holds at least `n` entries, read no further than that. */
function holdsAtLeast(folder: string, n: number): boolean {
  let dir: fs.Dir;
  try {
    dir = fs.opendirSync(folder);
  } catch {
    return false;
  }
  try {
    let seen = 0;
    while (seen < n && dir.readSync()) seen++;
    return seen >= n;
  } finally {
    dir.closeSync();
  }
}

/**
 * Open the tracker on a state directory: decide whether reqwatch manages or only observes it
 * (lib/store/ownership.ts), create its folders (a managed one's), open (or rebuild) the index, and run
 * recovery unless `recover: false` (in an observed folder, the open only reconciles its index).
 */
export function openTracker(options: TrackerOptions = {}): Tracker {
  const resolved = resolveTrackerOptions(options);
  const { dir, ownership } = openStateDir(resolved.stateDir, resolved);
  ensureStateDir(dir);
  let opened = openIndex(dir.indexFile);
  let identity = indexIdentity(dir.indexFile);
  const ctx: TrackerContext = { dir, ownership, db: opened.db, options: resolved, now: resolved.now };
  const waiters = new Waiters(() => ctx.db);
  ctx.onCommit = (request) => waiters.notify(request);
  const monitors = new Set<MonitorHandle>();
  /** Each ingest this tracker started, with how to restart it on a reopened index (its watchers were on the old folders). */
  const ingests = new Map<IngestHandle, () => void>();
  const guards = new Set<IndexGuardHandle>();

  const sessions = new Sessions(ctx);
  let archiveDb: ArchiveDb | null = null;
  const archive = () => (archiveDb ??= openArchive(dir.archiveFile));

  /**
   * Bring the just-opened index up to date: an index that must be rebuilt is rebuilt even without
   * `withRecovery`; only recovery changes states (times out hung requests).
   */
  function catchUp(withRecovery: boolean, when: "at-open" | "in-background" = "at-open"): RecoveryReport | null {
    if (opened.needsRebuild && !withRecovery && when === "in-background" && holdsAtLeast(dir.requestsDir, BACKGROUND_REBUILD_FROM)) {
      ctx.indexing = { done: 0, total: 0, startedAt: ctx.now() };
      return null;
    }
    ctx.rebuilding = opened.needsRebuild;
    try {
      return withRecovery || opened.needsRebuild ? recover(ctx, sessions, { hungAfterMs: withRecovery ? resolved.hungAfterMs : null }) : null;
    } finally {
      ctx.rebuilding = false;
    }
  }
  const openReport = catchUp(resolved.recover, resolved.rebuild);
  /** Aborted by `close()`: a rebuild under way stops. */
  const stopping = new AbortController();
  const stopCheckpoints = startCheckpoints(() => ctx.db, `${dir.indexFile}-wal`);

  function mustExist(requestId: string, current: RequestRecord | null): RequestRecord {
    if (!current) throw new ReqwatchError("NOT_FOUND", `Request ${requestId} does not exist.`);
    return current;
  }

  const actions = new BulkActions(ctx, archive);

  /** Reopen a lost index (rebuilding it from the files when it is new) and the archive with it. */
  function checkIndex(): IndexCheck {
    const started = performance.now();
    const problem = indexProblem(dir, ctx.db, identity);
    if (!problem || problem.kind === "dir-missing") return { problem, reopened: false, durationMs: performance.now() - started };
    // Deleted or replaced: open what is there now (another process may have made it). Corrupt: start over.
    if (problem.kind === "corrupt") removeIndexFiles(dir.indexFile);
    ensureStateDir(dir);
    const old = ctx.db;
    opened = openIndex(dir.indexFile);
    identity = indexIdentity(dir.indexFile);
    ctx.db = opened.db;
    old.close();
    archiveDb?.close();
    archiveDb = null;
    catchUp(false);
    for (const restart of ingests.values()) restart();
    return { problem, reopened: true, durationMs: performance.now() - started };
  }

  return {
    stateDir: dir,
    ownership,
    actions,
    sessions,
    options: resolved,
    openReport,

    create(input) {
      const { requestId = randomUUID(), workspace, ...rest } = input;
      assertRequestId(requestId);
      assertWorkspace(workspace);
      const { state, reason, by, ...given } = rest;
      // Created inside an instrumented gateway's span: its trace is the request's.
      const traceparent = given.traceparent ?? activeTraceparent() ?? undefined;
      const validated = validateFields({ ...given, ...(traceparent !== undefined && { traceparent }) }) ?? {};
      return commitChange(ctx, requestId, (current) => {
        if (current) throw new ReqwatchError("ALREADY_EXISTS", `Request ${requestId} already exists.`);
        return newRequest({ ...validated, requestId, workspace, state, reason, by }, ctx.now());
      })!;
    },

    transition(requestId, to, extra = {}) {
      return this.update(requestId, { ...extra, to });
    },

    update(requestId, change) {
      assertRequestId(requestId);
      const fixed = typeof change === "function" ? null : validateChange(change);
      return commitChange(ctx, requestId, (current) => {
        const request = mustExist(requestId, current);
        const next = fixed ?? validateChange((change as (current: RequestRecord) => Change)(request));
        return applyChange(request, next, ctx.now());
      })!;
    },

    get(requestId) {
      assertRequestId(requestId);
      return getRequest(ctx.db, requestId);
    },

    list(filters) {
      const resolved = resolveListFilters(filters);
      // Without a follower in this process (a CLI command), the response files are read in first.
      if (resolved.callbackFailed && ingests.size === 0) reconcileResponses(ctx);
      return listRequests(ctx.db, resolved);
    },

    countsByState(filters = {}) {
      if (filters.workspace !== undefined) assertWorkspace(filters.workspace);
      if (filters.sessionId !== undefined) assertRequestId(filters.sessionId);
      return countByState(ctx.db, filters);
    },

    oldestCreatedAt() {
      return oldestCreatedAt(ctx.db);
    },

    responseCounts() {
      return responseCounts(ctx.db);
    },

    sessionsSeen(options) {
      return sessionsSeen(ctx.db, options);
    },

    unreadableFiles() {
      return listUnreadable(ctx.db);
    },

    generation() {
      return readMeta(ctx.db, "generation") ?? opened.generation;
    },

    recover(options = {}) {
      assertManaged(ctx, "Recovery");
      return recover(ctx, sessions, { hungAfterMs: options.hungAfterMs ?? resolved.hungAfterMs });
    },

    cleanup(options = {}) {
      if (!options.dryRun) assertManaged(ctx, "Cleanup");
      return cleanup(ctx, archive, { olderThanMs: options.olderThanMs ?? resolved.retentionMs, ...options });
    },

    restore(requestId) {
      assertRequestId(requestId);
      return restore(ctx, archive, requestId);
    },

    claimNext(options) {
      if (options?.workspace !== undefined) assertWorkspace(options.workspace);
      assertManaged(ctx, "Claiming");
      return claimNext(ctx, options);
    },

    heartbeat(requestId, token) {
      assertManaged(ctx, "A heartbeat");
      return heartbeat(ctx, requestId, token);
    },

    recordResult(requestId, token, result) {
      assertRequestId(requestId);
      assertManaged(ctx, "Recording a result");
      writeResultMarker(dir, { requestId, token, writtenAt: ctx.now(), ...redactResult(resolved.redaction, result) });
    },

    complete(requestId, token, result, by) {
      // Even a duplicate, which writes no request, removes the result marker.
      assertManaged(ctx, "Completing");
      return complete(ctx, requestId, token, result, by);
    },

    fail(requestId, token, error, options) {
      assertManaged(ctx, "Failing");
      return fail(ctx, requestId, token, error, options);
    },

    retry(target, options) {
      return retry(ctx, target, options);
    },

    cancel(requestIds, options) {
      return cancel(ctx, requestIds, options);
    },

    pause(workspace, options) {
      return pauseWorkspace(ctx, archive, workspace, options);
    },

    resume(workspace, options) {
      return resumeWorkspace(ctx, archive, workspace, options);
    },

    pauses() {
      return readPauses(ctx.dir);
    },

    queueStats() {
      return queueStats(ctx.db);
    },

    activity(options) {
      return { rows: activityRows(ctx.db, options), live: liveStateCounts(ctx.db, options.match) };
    },

    workers(limit) {
      return listWorkers(ctx.db, limit);
    },

    unfinishedBy(worker, limit) {
      return unfinishedBy(ctx.db, worker, limit);
    },

    knownValues(field, prefix = "", limit = 20) {
      return knownValues(ctx.db, field, prefix, limit);
    },

    stuck() {
      return findStuck(ctx);
    },

    monitorPass() {
      return monitorPass(ctx);
    },

    startMonitor(options = {}) {
      const handle = startMonitorLoop(() => monitorPass(ctx), { intervalMs: resolved.monitorIntervalMs, ...options });
      monitors.add(handle);
      return handle;
    },

    waitForResult(requestId, { timeoutMs }) {
      assertRequestId(requestId);
      return waiters.wait(requestId, getRequest(ctx.db, requestId), timeoutMs);
    },

    pendingWaits() {
      return waiters.size;
    },

    startIngest(options) {
      let current = startIngest(ctx, sessions, options);
      const handle: IngestHandle = {
        status: () => current.status(),
        flush: () => current.flush(),
        stop() {
          current.stop();
          ingests.delete(handle);
        },
      };
      ingests.set(handle, () => {
        current.stop();
        current = startIngest(ctx, sessions, options);
      });
      return handle;
    },

    changesSince(afterSeq, limit) {
      return readChanges(ctx.db, afterSeq, limit);
    },

    feedHead() {
      return feedHead(ctx.db);
    },

    feedLastSeq() {
      return feedLastSeq(ctx.db);
    },

    backfillTextIndex(rows = 1000) {
      return withWritersLock(ctx.db, () => backfillText(ctx.db, rows));
    },

    checkIndex,

    startIndexGuard(options = {}) {
      const handle = startIndexGuard(checkIndex, { now: ctx.now, ...options });
      guards.add(handle);
      return handle;
    },

    indexing: () => (ctx.indexing ? { ...ctx.indexing } : null),

    async rebuildIndex() {
      if (!ctx.indexing) return null;
      const progress = ctx.indexing;
      const fromSeq = feedLastSeq(ctx.db);
      try {
        // Without the bundle's thread script (the sources run directly), here and now.
        const report = (await rebuildOnThread(ctx, progress, stopping.signal)) ?? (stopping.signal.aborted ? null : catchUp(false));
        if (!report || stopping.signal.aborted) return null;
        // What reqwatch writers changed while it ran (the feed names them), read again as it is now.
        ingestRequests(ctx, requestsChangedSince(ctx.db, fromSeq));
        return report;
      } finally {
        if (!stopping.signal.aborted) ctx.indexing = null;
      }
    },

    close() {
      stopping.abort();
      stopCheckpoints();
      for (const monitor of monitors) monitor.stop();
      for (const ingest of ingests.keys()) ingest.stop();
      for (const guard of guards) guard.stop();
      waiters.close();
      ctx.db.close();
      archiveDb?.close();
      discardSpares();
    },
  };
}
