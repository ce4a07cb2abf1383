import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { FeedHub } from "./feedHub";
import { SourceSet, sourcesFromEnv } from "../sources/liveSource";
import type { SourceSpec } from "../sources/sourceSpec";
import type { OtelExportStatus } from "../otel/exportStatus";
import type { IndexGuardHandle } from "../recovery/indexGuard";
import type { IngestHandle } from "../ingest/folderIngest";
import type { MonitorHandle, StuckRequest, TrackerOptions } from "../types";
import type { IndexingProgress } from "../store/context";
import { resolveStateDirPath } from "../stateFiles/stateDir";
import { openRoles } from "../tracker";
import type { Reader } from "../roles/reader";
import type { Operator } from "../roles/operator";
import type { Upkeep } from "../roles/recording";
import type { Tracker } from "../types";
import { healthView, type HealthView } from "../views/healthView";
import { recoveryNotice, type RecoveryNotice } from "../views/overviewView";
import { formatDuration } from "../model/duration";
import { resolveTrackerOptions } from "../store/options";
import { startTelemetry, type TelemetryHandle, type TelemetryStatus } from "../telemetry/startTelemetry";
import { telemetrySettings, telemetryStoreDir, type TelemetrySettings } from "../telemetry/telemetrySettings";
import { SharedTelemetry } from "../telemetry/sharedTelemetry";
import { reportUsage, usageFolders, usageLedgerAt } from "../telemetry/usage/reportUsage";
import type { UsageAgent } from "../telemetry/usage/usageLines";
import type { UsageQuery, UsageReport } from "../telemetry/usage/usageReport";
import { TelemetrySessions } from "../views/telemetrySessionsView";

/**
 * What the dashboard server runs in its process: the folder (opened without start-up recovery) as a
 * reader and an operator, the stuck monitor, the ingest of foreign writes, the index guard and the one
 * fan-out of the change feed. The server's own read API (lib/dashboard/readApi.ts) and the Next.js pages and route handlers
 * all use the same one: see `getRuntime`.
 */
export interface Runtime {
  /** The library's tracker on the folder: the monitor runs on it (a test records through it). */
  readonly tracker: Tracker;
  /** The read model: what the pages, the read API and the feed show. */
  readonly reader: Reader;
  /** A person's actions: the action routes and a source's actions. */
  readonly operator: Operator;
  readonly monitor: MonitorHandle;
  /** Restarted by the tracker when the index guard reopens the state directory. */
  readonly ingest: IngestHandle;
  /** Notices a deleted, replaced or corrupted index.db, or a missing state directory, and recovers. */
  readonly guard: IndexGuardHandle;
  readonly feed: FeedHub;
  /** Other programs' queues shown beside the folder (`--source`, REQWATCH_SOURCES), read-only; and `otel`, what the receiver was sent. */
  readonly sources: SourceSet;
  /** The OTLP receiver (REQWATCH_OTLP_PORT), the reader of agents' files (REQWATCH_AGENT_FILES) and their store; both off: null. */
  readonly telemetry: TelemetryHandle | null;
  /** The sessions in what the receiver kept (Claude Code's, GenAI conversations), beside the folder's on the sessions pages; null with no receiver. */
  readonly telemetrySessions: TelemetrySessions | null;
  /** Per launch: the browser sends it with every action, so another site's form or fetch cannot act. */
  readonly actionToken: string;
  /** What the monitor's first pass did to requests whose reqwatch worker had gone, or null (also before that pass): the overview's notice. */
  recoveryNotice(): RecoveryNotice | null;
  /** What the monitor's latest pass found stuck (empty before the first pass): table rows show its reasons. */
  lastStuck(): readonly StuckRequest[];
  /** The Health page's figures: the state directory, the index, the ingest, the monitor, the guard, and the OpenTelemetry export when it runs. */
  /** The Health page's figures; `unmappedOffset` pages through the received names no mapping knows. */
  health(options?: { unmappedOffset?: number }): HealthView & { otel: OtelExportStatus | null; telemetry: TelemetryStatus | null };
  /** How long callbacks waited for the event loop since the server listens, in ms: what every request waits behind a long synchronous task. */
  eventLoopDelay(): { p50: number; p99: number; max: number };
  /** The server listens: the event loop's delay is measured from here (not the framework's start-up). */
  serving(): void;
  /** The OpenTelemetry export the server runs (`--otel`): attached once started; its status is in `health()`. */
  attachExport(exporter: { status(): OtelExportStatus; stop(): Promise<void> }): void;
  /** The agents' usage from their own files (the folders the settings read, REQWATCH_AGENT_FILES off: none), its ledger brought up to date first. */
  usage(query: UsageQuery, agent?: UsageAgent): Promise<UsageReport>;
  /** How far indexing the folder is while the server answers (a first open, a lost index); null when the index is complete. */
  indexing(): IndexingProgress | null;
  /**
   * Settles once the index holds its first batch while it fills (the newest files: a page rendered
   * then shows the final first page), at once when it is complete, and after FIRST_BATCH_WAIT_MS at most.
   */
  firstBatch(): Promise<void>;
  /** Stop the monitor, the watchers, the guard and the export, and close the index. */
  close(): void;
}

/** How often the browsers hear how far indexing is (and refetch what they show). */
const INDEXING_EVERY_MS = 500;
/** The longest a page waits for the index's first batch; then it shows what there is and the browser follows the indexing. */
const FIRST_BATCH_WAIT_MS = 2000;
const FIRST_BATCH_POLL_MS = 20;
/** A failed indexing is tried again after this, then after twice as long each time, up to the most. */
const INDEXING_RETRY_FIRST_MS = 5000;
const INDEXING_RETRY_MAX_MS = 5 * 60_000;

/**
 * Open the runtime on a state directory (the options default to the environment's, as for
 * `openRoles`). Looking changes nothing: no start-up recovery (timing out stuck processing requests is their
 * owner's, in `openTracker` or `reqwatch recover`); the monitor acts only on what reqwatch's own
 * queue owns, and in a folder reqwatch only observes, on nothing.
 */
export function openRuntime(
  options: TrackerOptions = {},
  sourceSpecs: readonly SourceSpec[] = sourcesFromEnv(process.env.REQWATCH_SOURCES),
  telemetryOptions: TelemetrySettings = telemetrySettings(),
): Runtime {
  return new DashboardRuntime(options, sourceSpecs, telemetryOptions);
}

type AttachedExport = { status(): OtelExportStatus; stop(): Promise<void> };

/** Nanoseconds as milliseconds, to a tenth. */
const ms = (ns: number) => Math.round(ns / 1e5) / 10;

class DashboardRuntime implements Runtime {
  readonly tracker: Tracker;
  readonly reader: Reader;
  readonly operator: Operator;
  readonly monitor: MonitorHandle;
  readonly ingest: IngestHandle;
  readonly guard: IndexGuardHandle;
  readonly feed: FeedHub;
  readonly sources: SourceSet;
  readonly telemetry: TelemetryHandle | null;
  readonly telemetrySessions: TelemetrySessions | null;
  readonly actionToken: string;
  readonly indexing: () => IndexingProgress | null;

  /** Closes the folder: stops the monitor, the ingest and the guard it started. */
  readonly #closeFolder: () => void;
  readonly #settings: TelemetrySettings;
  #closed = false;
  #exporter: AttachedExport | null = null;
  #notice: RecoveryNotice | null = null;
  #passes = 0;
  #processingAtStart: string[] = [];
  #usageRun: Promise<unknown> = Promise.resolve();
  readonly #loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });

  constructor(options: TrackerOptions, sourceSpecs: readonly SourceSpec[], settings: TelemetrySettings) {
    // The dashboard makes a missing folder its own (npm start's default ./.reqwatch), but an existing
    // empty one is observed: a gateway may have made it and not written yet.
    const stateDir = resolveStateDirPath(options.stateDir);
    // A folder opened for the first time (or a lost index) is indexed while the server answers: newest first, so the first page is right at once.
    const { tracker, reader, operator, upkeep, close } = openRoles({
      ...options,
      stateDir,
      recover: false,
      create: !fs.existsSync(stateDir),
      rebuild: "in-background",
    });
    this.tracker = tracker;
    this.reader = reader;
    this.operator = operator;
    this.#closeFolder = close;
    this.#settings = settings;
    // Actions a killed server left half done say so in the audit log.
    if (reader.ownership.access === "managed") operator.actions.closeInterrupted();
    // Other writers (hooks, editors, other tools) reach the index, and so the live feed, at once. It
    // starts with a catch-up with the folder, in the background on a big one so the server answers at
    // once (from the index an earlier run kept, until then); the monitor's first pass waits for it, so
    // it sees the folder as it is now.
    this.ingest = upkeep.startIngest({ catchUp: "in-background", onError: (error) => console.error("reqwatch: ingest failed:", error) });
    const feed = (this.feed = new FeedHub(reader));
    const closed = () => this.#closed;
    const background = reader.indexing() ? indexInBackground(reader, upkeep, feed, closed) : null;
    this.indexing = background?.progress ?? (() => reader.indexing());
    const indexed = background?.firstTry ?? null;
    if (!indexed) fillTextIndex(upkeep, closed);
    // The monitor's first pass (and the retention's first run) see the whole folder as it is now:
    // after the index is filled (a first open) and caught up with (a restart on a big folder).
    const current = indexed || this.ingest.caughtUp ? Promise.all([indexed, this.ingest.caughtUp]).then(() => this.#listProcessing()) : null;
    if (!current) this.#listProcessing();
    this.monitor = this.#startMonitor(current);
    this.telemetry = receiveTelemetry(settings, reader, options);
    // The received lifecycles, shown as the `otel` source beside the configured ones.
    const received: SourceSpec[] = this.telemetry ? [{ kind: "otel", file: this.telemetry.file, stuckAfterMs: settings.stuckAfterMs }] : [];
    const sources = (this.sources = new SourceSet([...sourceSpecs, ...received], reader.stateDir.storeDir));
    this.telemetrySessions = this.telemetry ? new TelemetrySessions(this.telemetry.file, settings.stuckAfterMs) : null;
    sources.start((changed) => feed.publishSources(sources.statuses(), changed));
    // A rebuilt index has a new generation: the feed hub sees it and every browser resets and refetches.
    this.guard = upkeep.startIndexGuard({
      onReopened: (cause) => {
        console.error(`reqwatch: ${cause}; the index was rebuilt from the files.`);
        fillTextIndex(upkeep, closed);
      },
      onError: (error) => console.error("reqwatch: index check failed:", error),
    });
    this.#loopDelay.enable();
    this.actionToken = randomBytes(32).toString("base64url");
  }

  recoveryNotice(): RecoveryNotice | null {
    return this.#notice;
  }

  /** The hub's list: the last pass, less what changes have moved on since (the badge's count). */
  lastStuck(): readonly StuckRequest[] {
    return this.feed.stuckRequests;
  }

  async firstBatch(): Promise<void> {
    const until = performance.now() + FIRST_BATCH_WAIT_MS;
    for (let progress = this.indexing(); progress && progress.done === 0 && !progress.failure && performance.now() < until; progress = this.indexing()) {
      await new Promise((resolve) => setTimeout(resolve, FIRST_BATCH_POLL_MS));
    }
  }

  usage(query: UsageQuery, agent?: UsageAgent): Promise<UsageReport> {
    const settings = this.#settings;
    // One update at a time: a page refreshed while a big first read runs waits for it, then reads what it kept.
    const report = this.#usageRun.then(() =>
      reportUsage({ ledgerFile: usageLedgerAt(settings, this.reader.stateDir.storeDir), folders: usageFolders(settings), query, agent }),
    );
    this.#usageRun = report.catch(() => undefined);
    return report;
  }

  health(options?: { unmappedOffset?: number }): HealthView & { otel: OtelExportStatus | null; telemetry: TelemetryStatus | null } {
    return {
      ...healthView(this.reader, this.ingest.status(), this.monitor, this.guard.status()),
      otel: this.#exporter?.status() ?? null,
      telemetry: this.telemetry?.status(options) ?? null,
    };
  }

  attachExport(handle: AttachedExport): void {
    if (this.#closed) void handle.stop();
    else this.#exporter = handle;
  }

  eventLoopDelay(): { p50: number; p99: number; max: number } {
    const loopDelay = this.#loopDelay;
    return { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) };
  }

  serving(): void {
    this.#loopDelay.reset();
  }

  close(): void {
    this.#closed = true;
    this.#loopDelay.disable();
    this.sources.close();
    void this.telemetry?.close();
    void this.#exporter?.stop();
    // Stops the monitor, the ingest and the guard it started.
    this.#closeFolder();
  }

  #listProcessing(): void {
    this.#processingAtStart = this.reader.list({ states: ["processing"], limit: 1000 }).items.map((row) => row.requestId);
  }

  #startMonitor(current: Promise<void> | null): MonitorHandle {
    const { reader, tracker, feed } = this;
    return tracker.startMonitor({
      ...(current && { startAfter: current }),
      onPass: (pass) => {
        if (this.#passes++ === 0) this.#notice = recoveryNotice(reader, tracker.openReport, this.#processingAtStart);
        feed.publishStuck(pass.stuck, pass.at);
      },
      onError: (error) => console.error("reqwatch: monitor pass failed:", error.message),
      onRetention: (run) => {
        if (run.error) console.error(`reqwatch: retention failed: ${run.error}`);
        else if (run.removed) console.log(`reqwatch: retention removed ${run.removed} finished request(s) (audit #${run.entryId})`);
        feed.publishRetention(run);
      },
      onRetentionError: (error) => console.error("reqwatch: the retention failed:", error.message),
    });
  }
}

/**
 * What OpenTelemetry instrumentation sends (Claude Code, the Anthropic SDK, ...), kept in a store of
 * reqwatch's own: the user's one in the cache folder, or (REQWATCH_TELEMETRY_DIR=state-folder) beside
 * the index; and the agents' own session files (Claude Code's, Codex CLI's, Gemini CLI's), read as
 * they are written into the same store (on by default). Both off: null.
 */
function receiveTelemetry(settings: TelemetrySettings, reader: Reader, options: TrackerOptions): TelemetryHandle | null {
  const receiving = {
    storeDir: telemetryStoreDir(settings, reader.stateDir.storeDir),
    settings,
    redaction: resolveTrackerOptions(options).redaction,
    onError: (error: Error) => console.error("reqwatch: the telemetry retention failed:", error.message),
  };
  // One receiver and one store for all the user's dashboards, whichever started first (lib/telemetry/sharedTelemetry.ts); or, set apart, a store beside the folder's index.
  if (settings.port === null && !settings.claudeDir && !settings.codexDir && !settings.geminiDir) return null;
  return settings.dir ? new SharedTelemetry(receiving, settings.dir) : startTelemetry(receiving);
}

/**
 * The index's rebuild on its own thread while the server answers (a first open, a lost index), with
 * its progress sent to every browser. A try that fails (a full disk) is tried again, at growing
 * intervals, until one succeeds or the runtime closes; `failure` says why meanwhile. Settles when
 * the first try ends, however it ends.
 */
function indexInBackground(
  reader: Reader,
  upkeep: Upkeep,
  feed: FeedHub,
  closed: () => boolean,
): { firstTry: Promise<void>; progress: () => IndexingProgress | null } {
  let failure: IndexingProgress["failure"] = null;
  /** The tracker's progress with the last try's failure: what the pages and the event stream show. */
  const withFailure = () => {
    const progress = reader.indexing();
    return progress && { ...progress, failure };
  };
  const publish = () => feed.publishIndexing(withFailure());
  // Every browser refetches what it shows as the index fills (at most twice a second), and once more when it is complete.
  const progress = setInterval(publish, INDEXING_EVERY_MS);
  progress.unref();
  const attempt = (retryInMs: number): Promise<void> =>
    upkeep
      .rebuildIndex()
      .then((report) => {
        failure = null;
        clearInterval(progress);
        if (!report || closed()) return;
        feed.publishIndexing(null);
        console.log(
          `reqwatch: indexed ${report.scanned.toLocaleString()} request files in ${(report.durationMs / 1000).toFixed(1)} s${report.readerThreads ? ` (${report.readerThreads} reader thread${report.readerThreads === 1 ? "" : "s"})` : ""}`,
        );
        fillTextIndex(upkeep, closed);
      })
      .catch((error: Error) => {
        if (closed()) return;
        failure = { message: error.message, retryInMs };
        console.error(`reqwatch: indexing the folder failed (${error.message}); trying again in ${formatDuration(retryInMs)}`);
        publish();
        setTimeout(() => void attempt(Math.min(retryInMs * 2, INDEXING_RETRY_MAX_MS)), retryInMs).unref();
      });
  return { firstTry: attempt(INDEXING_RETRY_FIRST_MS), progress: withFailure };
}

/** After a rebuild, fill the search index in small steps, leaving the event loop free between them; stops when the runtime closes. */
function fillTextIndex(upkeep: Pick<Upkeep, "backfillTextIndex">, closed: () => boolean): void {
  const step = () => {
    if (closed()) return;
    try {
      if (upkeep.backfillTextIndex(1000) > 0) setImmediate(step);
    } catch (error) {
      console.error("reqwatch: filling the search index failed (a search will retry):", (error as Error).message);
    }
  };
  setImmediate(step);
}

/**
 * Kept on globalThis: the dashboard server (server/main.ts, bundled on its own) opens it before it
 * listens, and the Next.js bundles, which hold their own copies of lib/, find it there instead of
 * opening the index a second time. Dev-mode module reloads find it there too.
 */
const holder = globalThis as typeof globalThis & { __reqwatch?: Runtime };

/** The process's runtime, opened on first use from the environment (REQWATCH_STATE_DIR and the rest). */
export function getRuntime(): Runtime {
  return (holder.__reqwatch ??= openRuntime());
}

/** Close the process's runtime if it was opened (server shutdown); never opens one. */
export function closeRuntime(): void {
  holder.__reqwatch?.close();
  holder.__reqwatch = undefined;
}
