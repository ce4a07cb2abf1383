import type { TrackerContext } from "../store/context";
import type { ArchiveDb } from "../db/archive";
import type { Actions } from "../actions/bulkActions";
import type { Sessions } from "../sessions/sessionTracker";
import type { MonitorPass, Ownership, RecoveryReport, RetentionRun } from "../types";
import { cleanup, restore, type CleanupOptions, type CleanupReport } from "../cleanup/cleanup";
import { recoverNow } from "../recovery/recover";
import { retry, type RetryOptions, type RetryReport, type RetryTarget } from "../queue/retry";
import { cancel, type CancelOptions, type CancelReport } from "../queue/cancel";
import { pauseWorkspace, resumeWorkspace, type PauseOptions, type PauseOutcome } from "../queue/pause";
import { runRetention } from "../actions/retention";
import { monitorPass } from "../monitor/monitorPass";
import { DEFAULT_RETENTION_MS } from "../store/options";
import type { RequestRecord } from "../model/requestFormat";

/** What the operator needs of the opened folder beyond the context. */
export interface OperatorParts {
  sessions: Sessions;
  archive: () => ArchiveDb;
  actions: Actions;
  /** Aborted when the folder is closed: a retention run under way stops. */
  stopping: AbortSignal;
}

/**
 * A person's actions on the folder, for the dashboard, the CLI and MCP: retry, cancel, cleanup and
 * restore, pause, recovery, the retention, and the bulk actions. Each operation checks its own
 * preconditions (an observed folder refuses every write with READ_ONLY).
 */
export class FolderOperator {
  readonly #ctx: TrackerContext;
  readonly #parts: OperatorParts;
  /** Bulk actions with dry runs, progress, the audit log and undo (the dashboard's actions). */
  readonly actions: Actions;

  constructor(ctx: TrackerContext, parts: OperatorParts) {
    this.#ctx = ctx;
    this.#parts = parts;
    this.actions = parts.actions;
  }

  /** Whether actions may write here at all, and why not: the commands word their refusals from it. */
  get ownership(): Ownership {
    return this.#ctx.ownership;
  }

  /** A person's retry of ids or of every request matching a filter; `dryRun` reports exactly what would change. */
  retry(target: RetryTarget, options?: RetryOptions): RetryReport {
    return retry(this.#ctx, target, options);
  }

  /** A person's cancel: created, queued or processing requests go to `failed`, reason `cancelled`; a worker's late result is dropped. */
  cancel(requestIds: readonly string[], options?: CancelOptions): CancelReport {
    return cancel(this.#ctx, requestIds, options);
  }

  /** Finished requests older than `olderThanMs` (default: the retention, else 24 hours) archived, then removed. */
  cleanup(options: Partial<CleanupOptions> = {}): CleanupReport {
    return cleanup(this.#ctx, this.#parts.archive, { olderThanMs: options.olderThanMs ?? this.#ctx.options.retentionMs ?? DEFAULT_RETENTION_MS, ...options });
  }

  restore(requestId: string): RequestRecord {
    return restore(this.#ctx, this.#parts.archive, requestId);
  }

  /**
   * Pause a workspace's queue: no claim takes from it (work already claimed finishes), its wait is
   * not stuck. Durable (a file in the state folder), audited; refused in an observed folder.
   */
  pause(workspace: string, options?: PauseOptions): PauseOutcome {
    return pauseWorkspace(this.#ctx, this.#parts.archive, workspace, options);
  }

  /** Resume a paused workspace; false when it was not paused. */
  resume(workspace: string, options?: { by?: string }): boolean {
    return resumeWorkspace(this.#ctx, this.#parts.archive, workspace, options);
  }

  recover(options: { processingStuckAfterMs?: number } = {}): RecoveryReport {
    return recoverNow(this.#ctx, this.#parts.sessions, options.processingStuckAfterMs);
  }

  /** One pass of the stuck monitor. */
  monitorPass(): MonitorPass {
    return monitorPass(this.#ctx);
  }

  /**
   * One run of the retention (what the monitor runs): finished requests past `retentionMs`
   * archived and removed in paced steps, audited `by: retention`; the archive's own retention
   * applied. Null on an observed folder, with retention off, or when the folder closed meanwhile.
   */
  runRetention(): Promise<RetentionRun | null> {
    return runRetention(this.#ctx, this.#parts.actions, this.#parts.archive, this.#parts.stopping);
  }
}

/** The operator as its callers take it: its members, whatever object holds them (a test's all-in-one service too). */
export type Operator = Pick<FolderOperator, keyof FolderOperator>;
