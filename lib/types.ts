/**
 * The library's contract: the types a gateway or a worker writes against (lib/index.ts publishes
 * them beside the few values), on the ground floor. The implementations import these; this module
 * imports only the vocabulary below it (lib/model/, the session file's format) and none of them.
 */
import type { CommandStatus } from "./model/commandStatus";
import type { ErrorCode } from "./model/errors";
import type { ListFilters } from "./model/listFilters";
import type { RedactField, Redaction } from "./model/redaction";
import type { RequestFields, RequestRecord } from "./model/requestFormat";
import type { State } from "./model/states";
import type { StuckCause } from "./model/stuckCauses";
import type { Change, NewRequestInput } from "./model/transition";
import type { IntervalOptions } from "./process/interval";
import type { SessionRecord } from "./stateFiles/sessionFile";

export type { CommandStatus, ErrorCode, ListFilters, RequestFields, RequestRecord, State, StuckCause, Change, SessionRecord };
export type { ExtraPattern } from "./model/redaction";
export type { TerminalState } from "./model/states";
export type { TransitionEntry, CallbackInfo } from "./model/requestFormat";
export type { CommandEntry, ContextSnapshot } from "./stateFiles/sessionFile";

// The tracker a gateway or a worker opens, and its options.

export interface TrackerOptions {
  /**
   * Record at all. Default true, unless `REQWATCH_DISABLED` is 1, true, yes or on. Off (either
   * way), `openTracker` returns a tracker that writes nothing and never throws on the hot path: the
   * rollback of an integration, without a code change (lib/disabledTracker.ts).
   */
  enabled?: boolean;
  /** The state directory. Default: `REQWATCH_STATE_DIR`, else `./.reqwatch`. */
  stateDir?: string;
  /**
   * A request `processing` this long with no worker holding it is stuck: the monitor flags it, and
   * the owner's recovery times it out. Default 1 hour (`REQWATCH_PROCESSING_STUCK_AFTER`).
   */
  processingStuckAfterMs?: number;
  /**
   * Finished requests not updated for this long are archived and removed by the monitor's
   * retention (managed folders only), and by a cleanup not told an age. Default 24 hours
   * (`REQWATCH_RETENTION`); null (`off`) turns the monitor's retention off.
   */
  retentionMs?: number | null;
  /** Archived requests (and audit entries) older than this are dropped by the retention. Default 30 days (`REQWATCH_ARCHIVE_RETENTION`); null (`off`) keeps them. */
  archiveRetentionMs?: number | null;
  /**
   * Run recovery when opening (the owner's start-up: time out stuck processing requests, remove crashed
   * writers' temp files). Default true. An index that must be rebuilt is rebuilt regardless.
   */
  recover?: boolean;
  /** Create the state directory when it does not exist. Default true; false throws NOT_FOUND instead (readers). */
  create?: boolean;
  /**
   * Observe the folder without writing anything into it, even if reqwatch manages it. Default
   * false (`REQWATCH_READ_ONLY=1`). A folder reqwatch did not create is observed whatever this says.
   */
  readOnly?: boolean;
  /** Where the indexes of observed folders live. Default `REQWATCH_CACHE_DIR`, else `$XDG_CACHE_HOME/reqwatch`, else `~/.cache/reqwatch`. */
  cacheDir?: string;
  /**
   * A gateway's ipc folder, where its stop hook writes `<workspace>/responses/<id>.json` (output,
   * exit code, callback delivery). Default `REQWATCH_IPC_DIR`, else `ipc/` beside the state folder
   * when it exists. Read, never written.
   */
  ipcDir?: string;
  /** Attempts a request gets unless it sets its own `maxAttempts`. Default 3. */
  maxAttempts?: number;
  /** Back-off between automatic retries. Default base 1 s, cap 5 min, jitter 0.2. */
  backoff?: Partial<BackoffOptions>;
  /** A request queued for longer than this is flagged stuck. Default 10 min (`REQWATCH_QUEUED_STUCK_AFTER`). */
  queuedStuckAfterMs?: number;
  /** A processing request with no heartbeat for this long is checked by the monitor. Default 5 min (`REQWATCH_HEARTBEAT_TIMEOUT`). */
  heartbeatTimeoutMs?: number;
  /** How often the stuck monitor runs. Default 15 s (`REQWATCH_MONITOR_INTERVAL`). */
  monitorIntervalMs?: number;
  /** A session not updated for this long is expired: the next start begins a new one. Default 24 h (`REQWATCH_SESSION_EXPIRY`). */
  sessionExpiryMs?: number;
  /**
   * "full" (default): claims are as durable as every other write. "atomic": a claim's content is
   * fsynced before its rename but the rename is not forced to disk, so a power cut may lose the
   * claim and the request is re-run (see CommitOptions.durability), for a few percent more queue
   * throughput (`npm run bench`).
   */
  claimDurability?: "atomic" | "full";
  /**
   * When the index must be rebuilt from the files (a first open, a lost index): "at-open" (default)
   * rebuilds before `openTracker` returns; "in-background" leaves it to `rebuildIndex()`, which
   * writes the newest files first while the process goes on (the dashboard answers meanwhile from
   * what is in; `indexing()` says how far it is), for a folder of 2,000 files or more (fewer take a
   * fraction of a second at open). Recovery (`recover: true`) always rebuilds at open.
   */
  rebuild?: "at-open" | "in-background";
  /** Threads that read and parse the files while the index is rebuilt from them (0: the opening thread alone). Default: one per core beyond the first, at most 3. */
  rebuildThreads?: number;
  /**
   * Secrets in what is recorded are replaced by a marker that keeps their kind
   * (`[redacted: github token]`) before anything is written: see `RedactOptions`. On for every field
   * unless `raw` names it.
   */
  redact?: RedactOptions;
  /** The random source for back-off jitter, for tests. */
  random?: () => number;
  /** The clock, for tests. */
  now?: () => number;
}

export interface RedactOptions {
  /**
   * Fields written as given, for users who need the raw text: "all", or some of `prompt`, `output`,
   * `error` (a request's), `command`, `fileSummary`, `snapshot`, `blockers` (a session's).
   * Default: none (`REQWATCH_REDACT_RAW=prompt,output`, or `all`).
   */
  raw?: "all" | readonly RedactField[];
  /**
   * More secret formats, redacted besides the built-in ones: the kind the marker names, and a
   * regular expression (a RegExp, or its source; `/source/flags` gives flags). Default: none
   * (`REQWATCH_REDACT_PATTERNS`, a JSON object: `{"internal token": "itk_[A-Za-z0-9]{32}"}`).
   */
  patterns?: Readonly<Record<string, string | RegExp>>;
}

/** Exponential back-off between retries: base * 2^(attempt-1), at most cap, less up to `jitter` of it at random. */
export interface BackoffOptions {
  baseMs: number;
  capMs: number;
  /** 0 (none) to 1 (anywhere from 0 to the full delay). */
  jitter: number;
}

/** The options as resolved at open (defaults and REQWATCH_* settings filled in), frozen: no part of an opened folder changes them for another. */
export interface ResolvedTrackerOptions {
  readonly enabled: boolean;
  readonly stateDir: string;
  readonly processingStuckAfterMs: number;
  readonly retentionMs: number | null;
  readonly archiveRetentionMs: number | null;
  readonly recover: boolean;
  readonly create: boolean;
  readonly readOnly: boolean;
  readonly cacheDir: string;
  readonly ipcDir?: string;
  readonly maxAttempts: number;
  readonly backoff: BackoffOptions;
  readonly queuedStuckAfterMs: number;
  readonly heartbeatTimeoutMs: number;
  readonly monitorIntervalMs: number;
  readonly sessionExpiryMs: number;
  readonly claimDurability: "atomic" | "full";
  readonly rebuild: "at-open" | "in-background";
  readonly rebuildThreads: number;
  readonly redaction: Redaction;
  readonly random: () => number;
  readonly now: () => number;
}

/**
 * `managed`: reqwatch created the folder (or was told to adopt it) and writes there: its index,
 * archive and result markers, and changes to requests its own queue owns. `observed`: another
 * program's folder, read and never written; reqwatch's index of it lives in the user's cache.
 */
export type Access = "managed" | "observed";

export interface Ownership {
  access: Access;
  /** Why, in words a person can act on. */
  reason: string;
  /** For an observed folder: how to let reqwatch write there (a running dashboard needs a restart after it). */
  toWrite?: string;
}

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

/**
 * The library's tracker: what a gateway or a worker calls (lib/index.ts publishes it). The recording
 * tracker and the one that records nothing when tracking is off (lib/disabledTracker.ts) implement it.
 */
export interface Tracker {
  /**
   * Managed (reqwatch created or adopted the folder, and writes there) or observed (another
   * program's folder: read, never written; every write is refused with READ_ONLY), and why.
   */
  readonly ownership: Ownership;
  /** The options as resolved (defaults and REQWATCH_* settings filled in). */
  readonly options: ResolvedTrackerOptions;
  /**
   * The recovery report of `open`; with `recover: false`, the report of the index rebuild if one
   * was needed (no stuck processing requests timed out), else null.
   */
  readonly openReport: RecoveryReport | null;
  create(input: CreateInput): RequestRecord;
  /** Move a request to `to` (checked against the transition table), optionally setting fields. */
  transition(requestId: string, to: State, extra?: Omit<Change, "to">): RequestRecord;
  /** Set fields and/or change state; a function receives the current request under the writers' lock. */
  update(requestId: string, change: ChangeInput): RequestRecord;
  get(requestId: string): RequestRecord | null;
  list(filters?: ListFilters): RequestPage;
  /** Claim the oldest ready `queued` request (see lib/queue/claimNext.ts). Null when none is ready. */
  claimNext(options?: ClaimOptions): Claim | null;
  /** Renew a claim; false when the token is no longer current (stop: the result will be dropped). */
  heartbeat(requestId: string, token: string): boolean;
  /** Write the result marker, so a crash before `complete` loses nothing (runWorker does this). */
  recordResult(
    requestId: string,
    token: string,
    result: { outcome: "completed"; fields?: RequestFields } | { outcome: "failed"; error: string; retryable?: boolean },
  ): void;
  complete(requestId: string, token: string, result?: CompleteResult, by?: string): Delivery;
  fail(requestId: string, token: string, error: string, options?: FailOptions): Delivery;
  /** Resolves when the request reaches a terminal state, by any process; rejects with TimeoutError after `timeoutMs`. */
  waitForResult(requestId: string, options: { timeoutMs: number }): Promise<RequestRecord>;
  /** The session tracker: sessions/<id>.json, their index, their feed changes. */
  readonly sessions: SessionTracker;
  /**
   * Run the monitor every `monitorIntervalMs` until `stop()` or `close()`; on a managed folder it
   * also runs the retention (now, then every RETENTION_INTERVAL_MS) unless `retention: false`.
   */
  startMonitor(options?: Partial<MonitorOptions>): MonitorWithRetention;
  /**
   * With `rebuild: "in-background"`: run the rebuild the open left to do on a thread of its own,
   * newest files first, while this one goes on (reads see each batch as it commits). Its report;
   * null when there was none to do, or the tracker closed first (the next open rebuilds). When it
   * fails (a full disk), it rejects and `indexing()` stays: calling it again tries again.
   */
  rebuildIndex(): Promise<RecoveryReport | null>;
  /** How far the rebuild `rebuild: "in-background"` left to do has come; null once the index is whole. */
  indexing(): IndexingProgress | null;
  close(): void;
}

export interface IndexingProgress {
  /** Files written into the index so far. */
  done: number;
  /** Files to write (0 until they are listed). */
  total: number;
  startedAt: number;
  /** The last try's failure, while the dashboard waits to try again (lib/dashboard/runtime.ts). */
  failure?: { message: string; retryInMs: number } | null;
}

// Reading requests.

/** One row of a list: the indexed columns, not the whole document (prompts and outputs stay out). */
export interface RequestSummary {
  requestId: string;
  workspace: string;
  sessionId: string | null;
  /** As the file has it: a gateway's chat ids are numbers. */
  chatId: string | number | null;
  state: State;
  previousState: State | null;
  createdAt: number;
  lastUpdatedAt: number;
  /** When the request entered its current state. */
  stateSince: number;
  attempt: number | null;
  model: string | null;
  tokens: number | null;
  version: number;
}

export interface RequestPage {
  items: RequestSummary[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

// The work queue and the worker loop.

export interface ClaimOptions {
  /** Only claim from this workspace. */
  workspace?: string;
  /** Who is claiming, for the history (default `pid <pid>`). */
  worker?: string;
}

export interface Claim {
  request: RequestRecord;
  /** Pass to heartbeat, complete and fail: only the current claim's token is accepted. */
  token: string;
}

export type DeliveryOutcome = "applied" | "duplicate" | "dropped";

/** What happened to a result: applied, a harmless duplicate, or a late delivery that changed nothing. */
export interface Delivery {
  outcome: DeliveryOutcome;
  request: RequestRecord;
  /** Why a delivery was dropped, or what the failure led to. */
  reason?: string;
}

export interface CompleteResult {
  output?: string;
  tokens?: number;
  exitCode?: number;
  model?: string;
  /** Any other fields to set. */
  fields?: RequestFields;
}

export interface FailOptions {
  /** Whether another attempt may succeed. Default true. */
  retryable?: boolean;
  /** Who reports, for the history. */
  by?: string;
}

export interface HandlerContext {
  /** The claim's token (the worker completes or fails with it). */
  token: string;
  /** Aborted when the worker stops or the claim is lost (a heartbeat was refused). */
  signal: AbortSignal;
  /** Beat now (the worker also beats on an interval); false when the claim is no longer current. */
  heartbeat(): boolean;
}

export type Handler = (request: RequestRecord, context: HandlerContext) => CompleteResult | void | Promise<CompleteResult | void>;

export interface RunWorkerOptions {
  handler: Handler;
  /** A tracker to use; otherwise one is opened on `stateDir` (without recovery) and closed at the end. */
  tracker?: Tracker;
  stateDir?: string;
  /** Requests handled at once. Default 1. */
  concurrency?: number;
  workspace?: string;
  /** For the history. Default `pid <pid>`. */
  name?: string;
  /** Between claims when nothing is ready. Default 200 ms. */
  pollIntervalMs?: number;
  /** Default a third of the tracker's heartbeat timeout. */
  heartbeatIntervalMs?: number;
  /** Stop on SIGINT/SIGTERM (after the requests in hand are finished). Default true. */
  handleSignals?: boolean;
  /** Stop once no request is ready (tests, batch jobs). Default false. */
  stopWhenIdle?: boolean;
  /** Errors of the queue itself (not of the handler), e.g. an unreadable request file. Default: console.error. */
  onError?: (error: unknown) => void;
}

export interface WorkerStats {
  completed: number;
  failed: number;
  /** Results the tracker dropped because the claim was no longer current. */
  dropped: number;
}

export interface WorkerHandle {
  /** Stop claiming; resolves when the requests in hand are finished. */
  stop(): Promise<WorkerStats>;
  /** Resolves when the worker has stopped. */
  done: Promise<WorkerStats>;
  readonly stats: WorkerStats;
}

// Recovery, the monitor and the retention.

export interface RecoveryReport {
  /** Request files found. */
  scanned: number;
  /** Index rows the reconciliation added, updated or removed. */
  changed: number;
  /** Requests moved from `processing` to `timeout`: stuck there, no worker holding them, past `processingStuckAfterMs`. */
  timedOut: string[];
  /** Temp files left by crashed reqwatch writers, removed (another program's temp files are its own business). */
  removedTempFiles: string[];
  unreadable: UnreadableReport[];
  /** Threads that read the files beside the writing one (a rebuild of a big folder; else 0). */
  readerThreads: number;
  durationMs: number;
}

export interface UnreadableReport {
  file: string;
  reason: string;
}

/** A request the dashboard shows as stuck, with the reason in words. */
export interface StuckRequest {
  requestId: string;
  workspace: string;
  state: State;
  /** When it entered its state. */
  since: number;
  /** Which of the stuck rules it is past. */
  cause: StuckCause;
  /** What is known of it, in words: how long, and of its worker or its queue. */
  reason: string;
}

export interface MonitorCounts {
  /** `queued` longer than the threshold: flagged, nothing else. */
  stuckQueued: number;
  /**
   * `processing` with no reqwatch claim (another program, or a hand-made change, moved it there)
   * past the processing stuck threshold or its deadline; or any stuck request in a folder reqwatch only
   * observes: flagged, never changed.
   */
  stuckNotOwned: number;
  /** `processing` past `timeoutAt`: moved to `timeout`. */
  deadlineTimedOut: number;
  /** No heartbeat, but a result marker was there: the result was applied. */
  resultsApplied: number;
  /** No heartbeat, but the worker process is alive: flagged, left alone. */
  stuckAlive: number;
  /** No heartbeat and the worker is gone: back to `queued`. */
  released: number;
  /** No heartbeat, the worker is gone and no attempts are left: `timeout`. */
  timedOut: number;
}

export interface MonitorPass {
  at: number;
  durationMs: number;
  counts: MonitorCounts;
  /** What is stuck after this pass's actions: the dashboard's stuck badge counts these. */
  stuck: StuckRequest[];
}

export interface MonitorHandle {
  /** The latest pass, or null before the first. */
  lastPass(): MonitorPass | null;
  /** The error of the latest pass, if it failed (the monitor keeps running). */
  lastError(): Error | null;
  /** Run a pass now (also resets nothing: the interval keeps its rhythm). */
  passNow(): MonitorPass;
  stop(): void;
}

export interface MonitorLoopOptions extends IntervalOptions {
  /** Called after every pass. */
  onPass?: (pass: MonitorPass) => void;
  onError?: (error: Error) => void;
}

export interface MonitorOptions extends MonitorLoopOptions {
  /** Also run the retention, now and every RETENTION_INTERVAL_MS, on a managed folder. Default true. */
  retention: boolean;
  /** Called after every retention run (a run that failed says so in its `error`). */
  onRetention: (run: RetentionRun) => void;
  /** Called when a run could not even be recorded (its archive unwritable). */
  onRetentionError: (error: Error) => void;
}

export interface MonitorWithRetention extends MonitorHandle {
  /** The retention the monitor runs beside its passes; null when it does not (an observed folder, retention off, `retention: false`). */
  retention: RetentionHandle | null;
}

export interface RetentionHandle {
  /** Run now, or wait for the run under way. */
  runNow(): Promise<RetentionRun | null>;
  stop(): void;
}

/** One run of the monitor's retention (lib/actions/retention.ts), as the overview shows the latest. */
export interface RetentionRun {
  startedAt: number;
  finishedAt: number;
  /** Finished requests archived and removed from the folder. */
  removed: number;
  /** Requests that matched but changed or went before their step (left as they are). */
  skipped: number;
  /** The cleanup's audit entry (undo restores what it removed); null when nothing was past the retention. */
  entryId: number | null;
  /** Archived requests dropped for being older than the archive's retention. */
  archiveDropped: number;
  error: string | null;
}

// Sessions.

/** Session tracking is an enhancement, never the critical path: recording returns this, it never throws. */
export type SessionResult<T = SessionRecord> = { ok: true; value: T } | { ok: false; error: { code: ErrorCode; message: string } };

export interface CommandInput {
  command: string;
  workflow?: string;
  /** When it started (default: now less its duration). */
  startedAt?: number;
  durationSeconds?: number;
  status: CommandStatus;
}

export interface FileInput {
  path: string;
  summary?: string;
  workflow?: string;
}

export type SnapshotInput = Partial<{ activeTask: string | null; completedSteps: string[]; nextSteps: string[]; keyFiles: string[]; blockingIssues: string[] }>;

/** What a start did: continued the current session, or began a new one (and why). */
export interface StartOutcome {
  session: SessionRecord;
  started: boolean;
  /** Why a new session began: none yet, the last one expired or was reset, or its file is unreadable (kept, reported). */
  reason: "continued" | "none" | "expired" | "unreadable";
}

/** The session tracker as the library's tracker hands it out: what a gateway, a worker or a hook records and reads back. */
export interface SessionTracker {
  /** The current session's id: the newest not ended, updated within the expiry; null when there is none. */
  current(): string | null;
  /** Continue the session updated within the expiry window, else start a new one with a fresh id. */
  start(): SessionResult<StartOutcome>;
  recordCommand(input: CommandInput, sessionId?: string): SessionResult;
  recordFile(input: FileInput, sessionId?: string): SessionResult;
  /** A file's path as `recordFile` records it (its key in `files_modified`): redacted with the summaries. */
  recordedPath(path: string): string;
  updateSnapshot(input: SnapshotInput, sessionId?: string): SessionResult;
  /** End the current session and start another; nothing is deleted. */
  reset(): SessionResult<{ ended: string | null; session: SessionRecord }>;
  get(sessionId: string): SessionRecord | null;
}

// The shared store: the same queue on PostgreSQL, for gateways and workers on several hosts (docs/SHARED-STORE.md).

export interface SharedTrackerOptions {
  /** Attempts a request gets unless it sets its own `maxAttempts`. Default 3. */
  maxAttempts?: number;
  /** Back-off between automatic retries. Default base 1 s, cap 5 min, jitter 0.2. */
  backoff?: Partial<BackoffOptions>;
  /** A claim with no heartbeat for this long is taken back (requeued, or timed out on its last attempt). Default 5 min (`REQWATCH_HEARTBEAT_TIMEOUT`). */
  heartbeatTimeoutMs?: number;
  /** How often `startMonitor` takes back claims. Default 15 s (`REQWATCH_MONITOR_INTERVAL`). */
  monitorIntervalMs?: number;
  /** As the local tracker's: secrets are redacted before anything is written. */
  redact?: RedactOptions;
  /** This process's host in its claims. Default the machine's host name. */
  host?: string;
  /** Connections this process keeps to the database (besides one that listens for changes). Default 4. */
  poolSize?: number;
  /** The random source for back-off jitter, for tests. */
  random?: () => number;
  /** The clock, for tests. */
  now?: () => number;
}

export interface ResolvedSharedTrackerOptions {
  readonly maxAttempts: number;
  readonly backoff: BackoffOptions;
  readonly heartbeatTimeoutMs: number;
  readonly monitorIntervalMs: number;
  readonly redaction: Redaction;
  readonly host: string;
  readonly poolSize: number;
  readonly random: () => number;
  readonly now: () => number;
}

/**
 * The tracker on the shared store (`openSharedTracker`): the local `Tracker`'s queue and lifecycle
 * calls, each returning a promise, with the same states, checks and fence. Claims are taken with
 * `FOR UPDATE SKIP LOCKED`; liveness is the heartbeat alone (a pid means nothing on another host).
 */
export interface SharedTracker {
  readonly options: ResolvedSharedTrackerOptions;
  create(input: CreateInput): Promise<RequestRecord>;
  transition(requestId: string, to: State, extra?: Omit<Change, "to">): Promise<RequestRecord>;
  update(requestId: string, change: ChangeInput): Promise<RequestRecord>;
  get(requestId: string): Promise<RequestRecord | null>;
  /** Filters by workspace, states, session, ids and times, sorted and paged as the local list; text and prefix search are not there yet (BAD_INPUT). */
  list(filters?: ListFilters): Promise<RequestPage>;
  /** Take back stale claims first, then claim the oldest ready `queued` request. Null when none is ready. */
  claimNext(options?: ClaimOptions): Promise<Claim | null>;
  heartbeat(requestId: string, token: string): Promise<boolean>;
  /** Keep the result with the claim, so that a worker dying before `complete` loses nothing (the monitor applies it). */
  recordResult(
    requestId: string,
    token: string,
    result: { outcome: "completed"; fields?: RequestFields } | { outcome: "failed"; error: string; retryable?: boolean },
  ): Promise<void>;
  complete(requestId: string, token: string, result?: CompleteResult, by?: string): Promise<Delivery>;
  fail(requestId: string, token: string, error: string, options?: FailOptions): Promise<Delivery>;
  /** Resolves when the request reaches a terminal state, by any process on any host; rejects with TimeoutError after `timeoutMs`. */
  waitForResult(requestId: string, options: { timeoutMs: number }): Promise<RequestRecord>;
  /** One monitor step: take back every claim whose heartbeat is older than `heartbeatTimeoutMs`. The requests it acted on. */
  takeBackStaleClaims(): Promise<string[]>;
  /** Run that step every `monitorIntervalMs` until `stop()` or `close()`. */
  startMonitor(options?: { intervalMs?: number; onError?: (error: unknown) => void }): { stop(): void };
  close(): Promise<void>;
}

/** A shared-store handler's context: the local one's, with a heartbeat that answers later. */
export interface SharedHandlerContext {
  /** The claim's token (the worker completes or fails with it). */
  token: string;
  /** Aborted when the worker stops or the claim is lost (a heartbeat was refused: the monitor took it back). */
  signal: AbortSignal;
  /** Beat now (the worker also beats on an interval); false when the claim is no longer current. */
  heartbeat(): Promise<boolean>;
}

export type SharedHandler = (request: RequestRecord, context: SharedHandlerContext) => CompleteResult | void | Promise<CompleteResult | void>;

/** `runWorker`'s options on the shared store: the tracker is one `openSharedTracker` gave (the caller closes it). */
export interface RunSharedWorkerOptions extends Omit<RunWorkerOptions, "handler" | "tracker" | "stateDir"> {
  handler: SharedHandler;
  tracker: SharedTracker;
}
