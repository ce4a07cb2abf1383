import fs from "node:fs";
import type { TrackerContext } from "../store/context";
import { idOfFileName } from "../model/ids";
import { indexedAsIs, ingestRequests, isBadRequestFileName, noteBadFileNames, reconcile, reconcileInSteps } from "../recovery/reconcile";
import { writersLockFree } from "../db/writeLock";
import { BACKGROUND_FROM_FILES, holdsAtLeast } from "../stateFiles/stateDir";
import { reconcileResponses } from "../responses/responseIndex";
import type { Sessions } from "../sessions/sessionTracker";
import { followResponses, type ResponsesStatus } from "./followResponses";
import { serveSyncs, type SyncServer } from "./followerSync";

export interface IngestOptions {
  /**
   * Full reconciliation while the watcher works. Default 30 s, stretched on big state directories
   * so that reconciliation never takes more than 0.5% of a core.
   */
  reconcileEveryMs?: number;
  /** Reconciliation alone, when the watcher cannot run. Default 2 s. */
  fallbackReconcileEveryMs?: number;
  /** Called with each error of a background step (the loop keeps running). */
  onError?: (error: unknown) => void;
  /**
   * The catch-up with the folder at start: "now" (default), before `startIngest` returns; or
   * "in-background" (the dashboard, so it answers at once), in steps with the event loop free
   * between them, for a folder of 2,000 files or more (`caughtUp` says when it is done).
   */
  catchUp?: "now" | "in-background";
}

export interface IngestStatus {
  /** "watching": watcher plus periodic reconciliation; "reconciling": the watcher failed, reconciliation alone, more often. */
  mode: "watching" | "reconciling";
  /** Why the watcher is not running, when it is not. */
  watcherError: string | null;
  /** Files ingested on the watcher's word. */
  watcherIngested: number;
  lastReconcile: { at: number; durationMs: number; scanned: number; fixes: number } | null;
  /**
   * Index rows the periodic reconciliations had to fix. In normal operation this stays at 0: a
   * non-zero count means the watcher missed something.
   */
  reconcileFixes: number;
  /** From the watcher's first event of the latest batch to the batch being in the index (ms). */
  lastIngestLagMs: number | null;
  /** A gateway's response files, followed with chokidar (lib/ingest/followResponses.ts). */
  responses: ResponsesStatus;
}

export interface IngestHandle {
  /** The catch-up at start running in the background, settled when it is done (never rejects); null when it was done before `startIngest` returned. */
  readonly caughtUp: Promise<void> | null;
  status(): IngestStatus;
  /** Ingest what the watcher has queued, now (tests; the loop does it on its own). */
  flush(): void;
  stop(): void;
}

const FLUSH_DELAY_MS = 10;
/** While the writers' lock is busy, look again this often, up to this many times, before waiting for it. */
const BUSY_RETRY_MS = 20;
const BUSY_RETRIES = 50;

/**
 * Keep the index in line with writers that are not ours (a `jq ... && mv` hook, `cp`, an editor)
 * and with files that reached the disk but not the index before a crash. A watch on the requests
 * folder is the hint: each event names a file, read within ~10 ms (a rename over a file is one
 * change; the same content twice emits nothing). Reconciliation is the guarantee: every
 * `reconcileEveryMs` it stats everything and fixes what the watcher missed, and counts the fixes.
 *
 * `fs.watch` on the folder, not chokidar: chokidar puts one inotify watch on each file and missed
 * part of a large burst where one watch on the folder caught it all (docs/DEPENDENCIES.md).
 */
export function startIngest(ctx: TrackerContext, sessions: Sessions, options: IngestOptions = {}): IngestHandle {
  const reconcileEveryMs = options.reconcileEveryMs ?? 30_000;
  const fallbackEveryMs = options.fallbackReconcileEveryMs ?? 2_000;
  const onError = options.onError ?? ((error: unknown) => console.error("reqwatch ingest:", error));
  const responses = followResponses(ctx, onError);
  const status: Omit<IngestStatus, "responses"> = {
    mode: "watching",
    watcherError: null,
    watcherIngested: 0,
    lastReconcile: null,
    reconcileFixes: 0,
    lastIngestLagMs: null,
  };
  const pending = new Set<string>();
  const pendingSessions = new Set<string>();
  const pendingBadNames = new Set<string>();
  let pendingSince = 0;
  let flushTimer: NodeJS.Timeout | null = null;
  let reconcileTimer: NodeJS.Timeout | null = null;
  let watcher: fs.FSWatcher | null = null;
  let sessionWatcher: fs.FSWatcher | null = null;
  let stopped = false;
  let busyRetries = 0;
  let passing = false;
  let syncs: SyncServer | null = null;

  /** `now`: a command waits on it (a sync file, lib/ingest/followerSync.ts), so a busy lock is waited for. */
  const flush = (now = false) => {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = null;
    if (pendingSessions.size) {
      const ids = [...pendingSessions];
      pendingSessions.clear();
      try {
        sessions.reconcile(ids);
      } catch (error) {
        onError(error);
      }
    }
    if (pendingBadNames.size) {
      const names = [...pendingBadNames];
      pendingBadNames.clear();
      try {
        noteBadFileNames(ctx, names);
      } catch (error) {
        onError(error);
      }
    }
    if (!pending.size) return;
    const named = [...pending];
    pending.clear();
    const since = pendingSince;
    try {
      // Our own writes reach the watcher too, as do a worker's, which indexes its own writes: a
      // file the index already holds needs no second read.
      const ids = named.filter((id) => !indexedAsIs(ctx, id));
      if (!now && ids.length && busyRetries < BUSY_RETRIES && !writersLockFree(ctx.db)) {
        // A worker holds the lock, most likely to index this very file: look again shortly rather
        // than stall the server's event loop waiting for the lock.
        busyRetries++;
        for (const id of ids) pending.add(id);
        pendingSince = since;
        flushTimer = setTimeout(flush, BUSY_RETRY_MS);
        return;
      }
      busyRetries = 0;
      ingestRequests(ctx, ids);
      status.watcherIngested += ids.length;
      status.lastIngestLagMs = Math.round(performance.now() - since);
    } catch (error) {
      if (now) throw error;
      onError(error);
    }
  };

  const record = (report: { scanned: number; fixes: number }, started: number, counted: boolean) => {
    const sessionReport = sessions.reconcile();
    responses.appeared();
    const responseFixes = reconcileResponses(ctx);
    const fixes = report.fixes + sessionReport.fixes + responseFixes;
    status.lastReconcile = { at: ctx.now(), durationMs: Math.round(performance.now() - started), scanned: report.scanned, fixes };
    if (counted) status.reconcileFixes += fixes;
  };

  /** At start: in one go, so the index has caught up when `startIngest` returns. */
  const reconcileNow = () => {
    const started = performance.now();
    try {
      record(reconcile(ctx), started, false);
    } catch (error) {
      onError(error);
    }
  };

  /** Later passes: in steps, with the event loop free between them (the server keeps answering). */
  const reconcileInBackground = async (counted: boolean) => {
    // A rebuild on its own thread is reading every file already; a pass now would read them all again.
    // One pass at a time: the start's catch-up may still run when a fallback's first pass is due.
    if (ctx.indexing || passing) return;
    passing = true;
    const started = performance.now();
    try {
      const report = await reconcileInSteps(ctx, () => stopped);
      if (report) record(report, started, counted);
    } catch (error) {
      onError(error);
    } finally {
      passing = false;
    }
  };

  /**
   * The next pass, after the interval or a multiple of the last pass's duration, whichever is
   * longer: at most 0.5% of a core beside a working watcher, 10% when reconciliation is all there is.
   */
  const schedule = () => {
    if (stopped) return;
    if (reconcileTimer) clearTimeout(reconcileTimer);
    const watching = status.mode === "watching";
    const wait = Math.max(watching ? reconcileEveryMs : fallbackEveryMs, (status.lastReconcile?.durationMs ?? 0) * (watching ? 200 : 10));
    reconcileTimer = setTimeout(() => {
      void reconcileInBackground(status.mode === "watching").then(schedule);
    }, wait);
    reconcileTimer.unref();
  };

  const fallBack = (error: unknown) => {
    watcher?.close();
    watcher = null;
    sessionWatcher?.close();
    sessionWatcher = null;
    if (stopped) return;
    status.mode = "reconciling";
    const code = (error as NodeJS.ErrnoException)?.code;
    status.watcherError =
      code === "ENOSPC"
        ? "out of inotify watches (fs.inotify.max_user_watches)"
        : code === "ENOENT"
          ? "there is no requests/ folder to watch yet"
          : `${code ?? "error"}: the watcher stopped`;
    schedule();
  };

  try {
    watcher = fs.watch(ctx.dir.requestsDir, { persistent: false }, (_event, name) => {
      const id = name ? idOfFileName(String(name)) : null;
      if (!id) {
        // `bad name.json`: not a request, but health should say so now, not at the next reconciliation.
        if (name && isBadRequestFileName(String(name))) {
          pendingBadNames.add(String(name));
          flushTimer ??= setTimeout(flush, FLUSH_DELAY_MS);
        }
        return;
      }
      if (!pending.size) pendingSince = performance.now();
      pending.add(id);
      flushTimer ??= setTimeout(flush, FLUSH_DELAY_MS);
    });
    watcher.on("error", fallBack);
    // Sessions: another tool (or a reqwatch CLI in a hook) records a command; the dashboard shows it at once.
    // A folder reqwatch only observes may have no sessions/: reconciliation finds it if it comes.
    if (fs.existsSync(ctx.dir.sessionsDir))
      sessionWatcher = fs.watch(ctx.dir.sessionsDir, { persistent: false }, (_event, name) => {
        const id = name ? idOfFileName(String(name)) : null;
        if (!id) return;
        pendingSessions.add(id);
        flushTimer ??= setTimeout(flush, FLUSH_DELAY_MS);
      });
    sessionWatcher?.on("error", fallBack);
  } catch (error) {
    fallBack(error);
  }
  // At start: catch up with whatever happened while nobody was watching (a rebuild under way on its own thread does that).
  let caughtUp: Promise<void> | null = null;
  if (ctx.indexing) {
    // The rebuild reads every file.
  } else if (options.catchUp === "in-background" && holdsAtLeast(ctx.dir.requestsDir, BACKGROUND_FROM_FILES)) {
    caughtUp = reconcileInBackground(false);
  } else {
    reconcileNow();
  }
  // The periodic passes count from the end of the first.
  if (status.mode === "watching") {
    if (caughtUp) void caughtUp.then(schedule);
    else schedule();
  }
  // With its watcher running and the catch-up done, this ingest can vouch for the index to a command.
  const indexIno = fs.statSync(ctx.dir.indexFile, { throwIfNoEntry: false })?.ino;
  const vouch = () => {
    if (stopped || status.mode !== "watching") return;
    try {
      syncs = serveSyncs(
        ctx.dir,
        () => flush(true),
        () => !stopped && status.mode === "watching" && !ctx.indexing && fs.statSync(ctx.dir.indexFile, { throwIfNoEntry: false })?.ino === indexIno,
        onError,
      );
    } catch (error) {
      onError(error);
    }
  };
  if (caughtUp) void caughtUp.then(vouch);
  else vouch();

  return {
    caughtUp,
    status: () => ({ ...status, lastReconcile: status.lastReconcile && { ...status.lastReconcile }, responses: responses.status() }),
    flush() {
      flush();
      responses.flush();
    },
    stop() {
      stopped = true;
      syncs?.stop();
      void responses.stop();
      watcher?.close();
      sessionWatcher?.close();
      if (flushTimer) clearTimeout(flushTimer);
      if (reconcileTimer) clearTimeout(reconcileTimer);
    },
  };
}
