import fs from "node:fs";
import type { TrackerContext } from "../store/context";
import { idOfFileName } from "../model/ids";
import { indexedAsIs, ingestRequests, isBadRequestFileName, noteBadFileNames, reconcile, reconcileInSteps } from "../recovery/reconcile";
import { writersLockFree } from "../db/writeLock";
import { BACKGROUND_FROM_FILES, holdsAtLeast } from "../stateFiles/stateDir";
import { reconcileResponses } from "../responses/responseIndex";
import type { Sessions } from "../sessions/sessionTracker";
import { ResponsesFollower, type ResponsesStatus } from "./followResponses";
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
export class FolderIngest implements IngestHandle {
  readonly caughtUp: Promise<void> | null = null;

  readonly #ctx: TrackerContext;
  readonly #sessions: Sessions;
  readonly #reconcileEveryMs: number;
  readonly #fallbackEveryMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #responses: ResponsesFollower;
  readonly #status: Omit<IngestStatus, "responses"> = {
    mode: "watching",
    watcherError: null,
    watcherIngested: 0,
    lastReconcile: null,
    reconcileFixes: 0,
    lastIngestLagMs: null,
  };
  readonly #pending = new Set<string>();
  readonly #pendingSessions = new Set<string>();
  readonly #pendingBadNames = new Set<string>();
  #pendingSince = 0;
  #flushTimer: NodeJS.Timeout | null = null;
  #reconcileTimer: NodeJS.Timeout | null = null;
  #watcher: fs.FSWatcher | null = null;
  #sessionWatcher: fs.FSWatcher | null = null;
  #stopped = false;
  #busyRetries = 0;
  #passing = false;
  #syncs: SyncServer | null = null;

  constructor(ctx: TrackerContext, sessions: Sessions, options: IngestOptions = {}) {
    this.#ctx = ctx;
    this.#sessions = sessions;
    this.#reconcileEveryMs = options.reconcileEveryMs ?? 30_000;
    this.#fallbackEveryMs = options.fallbackReconcileEveryMs ?? 2_000;
    this.#onError = options.onError ?? ((error: unknown) => console.error("reqwatch ingest:", error));
    this.#responses = new ResponsesFollower(ctx, this.#onError);
    this.#watch();
    // At start: catch up with whatever happened while nobody was watching (a rebuild under way on its own thread does that).
    if (ctx.indexing) {
      // The rebuild reads every file.
    } else if (options.catchUp === "in-background" && holdsAtLeast(ctx.dir.requestsDir, BACKGROUND_FROM_FILES)) {
      this.caughtUp = this.#reconcileInBackground(false);
    } else {
      this.#reconcileNow();
    }
    // The periodic passes count from the end of the first.
    if (this.#status.mode === "watching") {
      if (this.caughtUp) void this.caughtUp.then(() => this.#schedule());
      else this.#schedule();
    }
    // With its watcher running and the catch-up done, this ingest can vouch for the index to a command.
    const indexIno = fs.statSync(ctx.dir.indexFile, { throwIfNoEntry: false })?.ino;
    if (this.caughtUp) void this.caughtUp.then(() => this.#vouch(indexIno));
    else this.#vouch(indexIno);
  }

  status(): IngestStatus {
    const status = this.#status;
    return { ...status, lastReconcile: status.lastReconcile && { ...status.lastReconcile }, responses: this.#responses.status() };
  }

  flush(): void {
    this.#flush();
    this.#responses.flush();
  }

  stop(): void {
    this.#stopped = true;
    this.#syncs?.stop();
    void this.#responses.stop();
    this.#watcher?.close();
    this.#sessionWatcher?.close();
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    if (this.#reconcileTimer) clearTimeout(this.#reconcileTimer);
  }

  #watch(): void {
    const { requestsDir, sessionsDir } = this.#ctx.dir;
    const fallBack = (error: unknown) => this.#fallBack(error);
    try {
      this.#watcher = fs.watch(requestsDir, { persistent: false }, (_event, name) => this.#requestFileChanged(name));
      this.#watcher.on("error", fallBack);
      // Sessions: another tool (or a reqwatch CLI in a hook) records a command; the dashboard shows it at once.
      // A folder reqwatch only observes may have no sessions/: reconciliation finds it if it comes.
      if (fs.existsSync(sessionsDir))
        this.#sessionWatcher = fs.watch(sessionsDir, { persistent: false }, (_event, name) => {
          const id = name ? idOfFileName(String(name)) : null;
          if (!id) return;
          this.#pendingSessions.add(id);
          this.#flushSoon();
        });
      this.#sessionWatcher?.on("error", fallBack);
    } catch (error) {
      this.#fallBack(error);
    }
  }

  #requestFileChanged(name: string | Buffer | null): void {
    const id = name ? idOfFileName(String(name)) : null;
    if (!id) {
      // `bad name.json`: not a request, but health should say so now, not at the next reconciliation.
      if (name && isBadRequestFileName(String(name))) {
        this.#pendingBadNames.add(String(name));
        this.#flushSoon();
      }
      return;
    }
    if (!this.#pending.size) this.#pendingSince = performance.now();
    this.#pending.add(id);
    this.#flushSoon();
  }

  #flushSoon(): void {
    this.#flushTimer ??= setTimeout(() => this.#flush(), FLUSH_DELAY_MS);
  }

  /** `now`: a command waits on it (a sync file, lib/ingest/followerSync.ts), so a busy lock is waited for. */
  #flush(now = false): void {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    if (this.#pendingSessions.size) {
      const ids = [...this.#pendingSessions];
      this.#pendingSessions.clear();
      try {
        this.#sessions.reconcile(ids);
      } catch (error) {
        this.#onError(error);
      }
    }
    if (this.#pendingBadNames.size) {
      const names = [...this.#pendingBadNames];
      this.#pendingBadNames.clear();
      try {
        noteBadFileNames(this.#ctx, names);
      } catch (error) {
        this.#onError(error);
      }
    }
    if (this.#pending.size) this.#ingestPending(now);
  }

  #ingestPending(now: boolean): void {
    const ctx = this.#ctx;
    const named = [...this.#pending];
    this.#pending.clear();
    const since = this.#pendingSince;
    try {
      // Our own writes reach the watcher too, as do a worker's, which indexes its own writes: a
      // file the index already holds needs no second read.
      const ids = named.filter((id) => !indexedAsIs(ctx, id));
      if (!now && ids.length && this.#busyRetries < BUSY_RETRIES && !writersLockFree(ctx.db)) {
        // A worker holds the lock, most likely to index this very file: look again shortly rather
        // than stall the server's event loop waiting for the lock.
        this.#busyRetries++;
        for (const id of ids) this.#pending.add(id);
        this.#pendingSince = since;
        this.#flushTimer = setTimeout(() => this.#flush(), BUSY_RETRY_MS);
        return;
      }
      this.#busyRetries = 0;
      ingestRequests(ctx, ids);
      this.#status.watcherIngested += ids.length;
      this.#status.lastIngestLagMs = Math.round(performance.now() - since);
    } catch (error) {
      if (now) throw error;
      this.#onError(error);
    }
  }

  #record(report: { scanned: number; fixes: number }, started: number, counted: boolean): void {
    const sessionReport = this.#sessions.reconcile();
    this.#responses.appeared();
    const responseFixes = reconcileResponses(this.#ctx);
    const fixes = report.fixes + sessionReport.fixes + responseFixes;
    this.#status.lastReconcile = { at: this.#ctx.now(), durationMs: Math.round(performance.now() - started), scanned: report.scanned, fixes };
    if (counted) this.#status.reconcileFixes += fixes;
  }

  /** At start: in one go, so the index has caught up when the constructor returns. */
  #reconcileNow(): void {
    const started = performance.now();
    try {
      this.#record(reconcile(this.#ctx), started, false);
    } catch (error) {
      this.#onError(error);
    }
  }

  /** Later passes: in steps, with the event loop free between them (the server keeps answering). */
  async #reconcileInBackground(counted: boolean): Promise<void> {
    // A rebuild on its own thread is reading every file already; a pass now would read them all again.
    // One pass at a time: the start's catch-up may still run when a fallback's first pass is due.
    if (this.#ctx.indexing || this.#passing) return;
    this.#passing = true;
    const started = performance.now();
    try {
      const report = await reconcileInSteps(this.#ctx, () => this.#stopped);
      if (report) this.#record(report, started, counted);
    } catch (error) {
      this.#onError(error);
    } finally {
      this.#passing = false;
    }
  }

  /**
   * The next pass, after the interval or a multiple of the last pass's duration, whichever is
   * longer: at most 0.5% of a core beside a working watcher, 10% when reconciliation is all there is.
   */
  #schedule(): void {
    if (this.#stopped) return;
    if (this.#reconcileTimer) clearTimeout(this.#reconcileTimer);
    const watching = this.#status.mode === "watching";
    const wait = Math.max(watching ? this.#reconcileEveryMs : this.#fallbackEveryMs, (this.#status.lastReconcile?.durationMs ?? 0) * (watching ? 200 : 10));
    this.#reconcileTimer = setTimeout(() => {
      void this.#reconcileInBackground(this.#status.mode === "watching").then(() => this.#schedule());
    }, wait);
    this.#reconcileTimer.unref();
  }

  #fallBack(error: unknown): void {
    this.#watcher?.close();
    this.#watcher = null;
    this.#sessionWatcher?.close();
    this.#sessionWatcher = null;
    if (this.#stopped) return;
    this.#status.mode = "reconciling";
    const code = (error as NodeJS.ErrnoException)?.code;
    this.#status.watcherError =
      code === "ENOSPC"
        ? "out of inotify watches (fs.inotify.max_user_watches)"
        : code === "ENOENT"
          ? "there is no requests/ folder to watch yet"
          : `${code ?? "error"}: the watcher stopped`;
    this.#schedule();
  }

  /** Serve the sync files of commands while this ingest still watches the index it caught up with (`indexIno`). */
  #vouch(indexIno: number | undefined): void {
    if (this.#stopped || this.#status.mode !== "watching") return;
    const ctx = this.#ctx;
    try {
      this.#syncs = serveSyncs(
        ctx.dir,
        () => this.#flush(true),
        () =>
          !this.#stopped && this.#status.mode === "watching" && !ctx.indexing && fs.statSync(ctx.dir.indexFile, { throwIfNoEntry: false })?.ino === indexIno,
        this.#onError,
      );
    } catch (error) {
      this.#onError(error);
    }
  }
}
