import type { ArchiveDb } from "../db/archive";
import { cleanup } from "../cleanup/cleanup";
import type { TrackerContext } from "../store/context";
import { ReqwatchError } from "../model/errors";
import { assertManaged } from "../store/ownership";
import { cancel } from "../queue/cancel";
import { checkRetryTarget, retry, targetIds } from "../queue/retry";
import type { ActionInput } from "./actionInput";
import type { SourceActionKind, SourceActionResult } from "../sources/sourceActions";
import { STATES, type State } from "../model/states";
import { ensureAuditTable, getEntry, listEntries, type AuditEntry, type SkipSummary } from "../db/auditLog";
import { FIRST_IDS, addSkip, type ActionDryRun } from "./actionDryRun";
import { actedBy, auditTarget, describeAction } from "./describeAction";
import { storeDryRun, takeStoredDryRun } from "./dryRunStore";
import { PacedRunner, type StartedRunOptions } from "./pacedRunner";
import { closeInterrupted } from "./settleInterrupted";
import { recordSourceAction } from "./sourceActionAudit";
import { dryRunUndo, undoCleanup } from "./undoCleanup";

function validate(input: ActionInput): ActionInput {
  if (input.kind === "retry") {
    checkRetryTarget(input);
    if (input.query !== undefined && !input.filter) throw new ReqwatchError("BAD_INPUT", "A retry's query comes with the filter made from it.");
    return input;
  }
  if (input.kind === "cancel") {
    if (!input.ids?.length) throw new ReqwatchError("BAD_INPUT", "A cancel takes the ids of the requests to cancel.");
    return input;
  }
  if (input.kind === "cleanup") {
    if (!Number.isFinite(input.olderThanMs) || input.olderThanMs < 0) throw new ReqwatchError("BAD_INPUT", "Cleanup needs an age of 0 or more.");
    for (const state of input.states ?? []) {
      if (!STATES.includes(state)) throw new ReqwatchError("BAD_INPUT", `Unknown state "${state}".`);
    }
    if (input.states?.length === 0) throw new ReqwatchError("BAD_INPUT", "Cleanup needs at least one state.");
    return input;
  }
  throw new ReqwatchError("BAD_INPUT", `Unknown action "${(input as { kind: string }).kind}".`);
}

/** The dashboard's bulk actions as a tracker hands them out (the class below is the one implementation). */
export interface Actions {
  /** Close the entries of actions whose process died during them; called once when a server opens. */
  closeInterrupted(): AuditEntry[];
  /** The dry run: what the action would do now, kept under a dryRunId for the run. */
  dryRun(input: ActionInput): ActionDryRun;
  run(input: ActionInput, options?: StartedRunOptions): Promise<AuditEntry>;
  dryRunUndo(entryId: number): ActionDryRun;
  undo(entryId: number, options?: StartedRunOptions): Promise<AuditEntry>;
  entry(id: number): AuditEntry;
  list(limit?: number): AuditEntry[];
  recordSourceAction(
    source: { name: string; file: string },
    kind: SourceActionKind,
    requestIds: readonly string[],
    by: string,
    act: () => SourceActionResult,
  ): { entry: AuditEntry; result: SourceActionResult };
}

/**
 * Bulk actions from the dashboard: first a dry run (kept in dryRunStore), then run in paced
 * steps (pacedRunner), each one written to the audit log. A cleanup can be undone (undoCleanup); a
 * run its process died in is settled when a server opens (settleInterrupted).
 */
export class BulkActions implements Actions {
  readonly #runner: PacedRunner;
  readonly #ctx: TrackerContext;
  readonly #archive: () => ArchiveDb;

  constructor(ctx: TrackerContext, archive: () => ArchiveDb) {
    this.#ctx = ctx;
    this.#archive = archive;
    this.#runner = new PacedRunner(ctx, () => this.#db());
  }

  #db(): ArchiveDb {
    const db = this.#archive();
    ensureAuditTable(db);
    return db;
  }

  closeInterrupted(): AuditEntry[] {
    return closeInterrupted(this.#ctx, this.#archive, this.#db());
  }

  dryRun(raw: ActionInput): ActionDryRun {
    const input = validate(raw);
    if (input.kind === "retry" || input.kind === "cancel") {
      const ids = this.#targetOf(input);
      const report = input.kind === "retry" ? retry(this.#ctx, { ids }, { dryRun: true }) : cancel(this.#ctx, ids, { dryRun: true });
      const changing = "retried" in report ? report.retried : report.cancelled;
      const byState: Partial<Record<State, number>> = {};
      for (const r of changing) byState[r.from] = (byState[r.from] ?? 0) + 1;
      const skipped: SkipSummary[] = [];
      for (const s of report.skipped) addSkip(skipped, s.reason, s.requestId);
      // Named by how many it would change: the count the dialog's button and the audit entry say too.
      const summary = describeAction(input, changing.length);
      const dryRunId = storeDryRun(this.#ctx, input, summary, ids);
      return {
        kind: input.kind,
        summary,
        dryRunId,
        matched: report.matched,
        willChange: changing.length,
        byState,
        firstIds: changing.slice(0, FIRST_IDS).map((r) => r.requestId),
        skipped,
      };
    }
    const report = cleanup(this.#ctx, this.#archive, { olderThanMs: input.olderThanMs, states: input.states, dryRun: true });
    const summary = describeAction(input);
    const dryRunId = storeDryRun(this.#ctx, input, summary, report.ids, report.cutoff);
    return {
      kind: "cleanup",
      summary,
      dryRunId,
      cutoff: report.cutoff,
      matched: report.matched,
      willChange: report.matched,
      byState: report.byState,
      firstIds: report.ids.slice(0, FIRST_IDS),
      skipped: [],
    };
  }

  /** The ids a retry or cancel acts on: those given, or those a filter matches now. */
  #targetOf(input: Extract<ActionInput, { kind: "retry" | "cancel" }>): string[] {
    if (input.kind === "cancel" || input.ids) return targetIds(this.#ctx, { ids: input.ids });
    return targetIds(this.#ctx, { filter: input.filter });
  }

  /** Start an action; the returned promise settles when it is done. The entry id is known at once via `onStart`. */
  async run(raw: ActionInput, options: StartedRunOptions = {}): Promise<AuditEntry> {
    const input = validate(raw);
    assertManaged(this.#ctx, describeAction(input));
    const dryRun = takeStoredDryRun(this.#ctx, input);
    const by = options.by ?? "dashboard";
    if (input.kind === "retry" || input.kind === "cancel") {
      const ids = dryRun?.ids ?? this.#targetOf(input);
      // The dry run's words and input: what it matched is what this run acts on.
      const described = dryRun
        ? { summary: dryRun.summary, target: dryRun.target }
        : { summary: describeAction(input, ids.length), target: auditTarget(input) };
      return this.#runner.run(ids, { kind: input.kind, ...described }, options, (chunk, progress, entryId) => {
        const report =
          input.kind === "retry" ? retry(this.#ctx, { ids: chunk }, { by: actedBy(by, entryId) }) : cancel(this.#ctx, chunk, { by: actedBy(by, entryId) });
        const changed = "retried" in report ? report.retried : report.cancelled;
        for (const r of changed) progress.changedIds.push(r.requestId);
        for (const s of report.skipped) addSkip(progress.skipReasons, s.reason, s.requestId);
        return { changed: changed.length, skipped: report.skipped.length };
      });
    }
    const matched = dryRun
      ? { ids: dryRun.ids, cutoff: dryRun.cutoff! }
      : cleanup(this.#ctx, this.#archive, { olderThanMs: input.olderThanMs, states: input.states, dryRun: true });
    const described = dryRun
      ? { summary: dryRun.summary, target: dryRun.target }
      : { summary: describeAction(input), target: auditTarget(input, matched.cutoff) };
    return this.#runner.run(matched.ids, { kind: "cleanup", ...described }, options, (chunk, progress, entryId) => {
      // The dry run's cutoff: a request that reached it since (or changed) is skipped, not taken in.
      const report = cleanup(
        this.#ctx,
        this.#archive,
        {
          olderThanMs: input.olderThanMs,
          states: input.states,
          cutoff: matched.cutoff,
          ids: chunk,
          lockedPiece: options.lockedPiece,
          pauseMs: options.pauseMs,
        },
        entryId,
      );
      progress.changedIds.push(...report.ids);
      const skippedIds = new Set(report.skipped.map((s) => s.requestId));
      for (const s of report.skipped) addSkip(progress.skipReasons, s.reason, s.requestId);
      // A chunk's id that no longer matched at all (changed or gone since the dry run) is a skip too.
      const unmatched = chunk.filter((id) => !report.ids.includes(id) && !skippedIds.has(id));
      for (const id of unmatched) addSkip(progress.skipReasons, "changed since the dry run", id);
      return { changed: report.archived, skipped: report.skipped.length + unmatched.length };
    });
  }

  dryRunUndo(entryId: number): ActionDryRun {
    return dryRunUndo(this.#ctx, () => this.#db(), entryId);
  }

  undo(entryId: number, options: StartedRunOptions = {}): Promise<AuditEntry> {
    return undoCleanup(this.#ctx, this.#archive, () => this.#db(), this.#runner, entryId, options);
  }

  recordSourceAction(
    source: { name: string; file: string },
    kind: SourceActionKind,
    requestIds: readonly string[],
    by: string,
    act: () => SourceActionResult,
  ): { entry: AuditEntry; result: SourceActionResult } {
    return recordSourceAction(this.#ctx, this.#db(), source, kind, requestIds, by, act);
  }

  /** An entry, with live progress while it runs. */
  entry(id: number): AuditEntry {
    return this.#runner.withLiveProgress(getEntry(this.#db(), id));
  }

  list(limit?: number): AuditEntry[] {
    return listEntries(this.#db(), limit).map((entry) => this.#runner.withLiveProgress(entry));
  }
}
