import { randomUUID } from "node:crypto";
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from "node:timers/promises";
import { getArchived, type ArchiveDb } from "../db/archive";
import { cleanup, restore, settleCleanup, settleRestore } from "../cleanup/cleanup";
import type { TrackerContext } from "../store/context";
import { formatDuration } from "../model/duration";
import { ReqwatchError, isReqwatchError } from "../model/errors";
import { isIndexed } from "../db/requestFingerprints";
import { assertManaged } from "../store/ownership";
import { pidExists } from "../process/liveness";
import { cancel } from "../queue/cancel";
import { checkRetryTarget, retry, targetIds, type RetryTarget } from "../queue/retry";
import type { ActionInput } from "./actionInput";
import { readRequestFile } from "../files/requestFile";
import type { SourceActionKind, SourceActionResult } from "../sources/sourceActions";
import { STATES, TERMINAL_STATES, type State } from "../model/states";
import { ensureAuditTable, getEntry, interruptedEntries, listEntries, markUndone, startEntry, updateEntry, type AuditEntry, type EntryProgress, type SkipSummary } from "../db/auditLog";
import { keepDryRun, takeDryRun, type DryRun } from "../db/dryRuns";

/** The dry run: what the action would do now. */
export type { ActionInput };

export interface ActionPreview {
  kind: ActionInput["kind"] | "undo";
  summary: string;
  /** Send it back with the run, which asks the same: it acts on exactly what this dry run described (kept for a while, for every process on the folder). */
  previewId: string;
  /** A cleanup's cutoff: requests not updated since this time. */
  cutoff?: number;
  matched: number;
  /** How many it would change, and of which states. */
  willChange: number;
  byState: Partial<Record<State, number>>;
  /** The first ids it would change. */
  firstIds: string[];
  skipped: SkipSummary[];
}

export interface RunOptions {
  by?: string;
  /**
   * Requests per step. By default each step is sized to take about SLICE_MS, with the event loop
   * free between steps, so a server hosting the action keeps answering.
   */
  chunkSize?: number;
  onProgress?: (entry: EntryProgress & { matched: number }) => void;
  /** A pause after each step, so writers in other processes find the lock free between steps (the monitor's retention). */
  restMs?: number;
  /** A cleanup's unlinks per hold of the writers' lock within a step, and the pause between holds (CleanupOptions). */
  lockedPiece?: number;
  pauseMs?: number;
  /**
   * Aborted when the tracker closes: the run stops between steps, writing nothing more (its entry
   * names the last step, as after a kill, and the next `closeInterrupted` settles it); it rejects with ActionStopped.
   */
  signal?: AbortSignal;
}

/** A run stopped by its signal, between two steps. */
export class ActionStopped extends Error {
  constructor() {
    super("The action stopped: its tracker closed.");
  }
}

const FIRST_IDS = 20;
/** Dry runs kept for their runs: how long, and how many (the dashboards and agents on a folder have a few open at most). */
const PREVIEW_TTL_MS = 15 * 60 * 1000;
const PREVIEWS_KEPT = 100;
const SKIP_EXAMPLES = 5;
/** A step's target duration when the size is not fixed: short enough that a page's other requests barely wait. */
const SLICE_MS = 40;
const FIRST_CHUNK = 10;
const MAX_CHUNK = 500;

function addSkip(skips: SkipSummary[], reason: string, id: string): void {
  // Group by the reason's kind, not its details ("a live worker (pid 12) holds it" and "pid 13" are one group).
  const key = reason.replace(/\d+/g, "N");
  let group = skips.find((s) => s.reason.replace(/\d+/g, "N") === key);
  if (!group) skips.push((group = { reason, count: 0, ids: [] }));
  group.count++;
  if (group.ids.length < SKIP_EXAMPLES) group.ids.push(id);
}

/** Who a retry's history names: the person's tool and the audit entry, so each request says which action changed it. */
function actedBy(by: string, entryId: number): string {
  return `${by} (action #${entryId})`;
}

function describeFilter(filter: NonNullable<RetryTarget["filter"]>): string {
  const parts = Object.entries(filter)
    .filter(([, value]) => value !== undefined && !(Array.isArray(value) && value.length === 0))
    .map(([key, value]) => `${key} ${Array.isArray(value) ? value.join(", ") : String(value)}`);
  return parts.length ? parts.join("; ") : "all requests";
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function describeAction(input: ActionInput): string {
  if (input.kind === "retry") {
    if (input.ids) return `Retry ${plural(input.ids.length, "selected request")}`;
    return `Retry every request matching: ${describeFilter(input.filter ?? {})}`;
  }
  if (input.kind === "cancel") return input.ids.length === 1 ? `Cancel ${input.ids[0]}` : `Cancel ${plural(input.ids.length, "request")}`;
  return `Clean up ${(input.states ?? TERMINAL_STATES).join(", ")} requests not updated for ${formatDuration(input.olderThanMs)}`;
}

/** What the audit entry records as an action's input (a cleanup's with the cutoff it works to). */
function auditTarget(input: ActionInput, cutoff?: number): unknown {
  if (input.kind === "cleanup") return { olderThanMs: input.olderThanMs, states: input.states ?? TERMINAL_STATES, cutoff };
  return input.kind === "cancel" || input.ids ? { ids: input.ids } : { filter: input.filter };
}

/** Objects with their keys in order, lists of names as sets: two inputs that ask the same read the same. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.every((item) => typeof item === "string") ? [...new Set(value as string[])].sort() : value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, item]) => item !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([key, item]) => [key, canonical(item)]),
    );
  }
  return value;
}

/** An action's arguments in one form, to tell whether a run asks what its dry run was asked. */
function askedOf(input: ActionInput): string {
  if (input.kind === "cleanup") return JSON.stringify(canonical({ kind: "cleanup", olderThanMs: input.olderThanMs, states: input.states ?? TERMINAL_STATES }));
  if (input.kind === "retry" && input.query !== undefined) {
    const query = new URLSearchParams(input.query);
    query.sort();
    return JSON.stringify(canonical({ kind: "retry", query: query.toString() }));
  }
  return JSON.stringify(canonical({ ...input, preview: undefined }));
}

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
  /** The dry run: what the action would do now, kept under a previewId for the run. */
  preview(input: ActionInput): ActionPreview;
  run(input: ActionInput, options?: RunOptions & { onStart?: (id: number) => void }): Promise<AuditEntry>;
  previewUndo(entryId: number): ActionPreview;
  undo(entryId: number, options?: RunOptions & { onStart?: (id: number) => void }): Promise<AuditEntry>;
  entry(id: number): AuditEntry;
  list(limit?: number): AuditEntry[];
  recordSourceAction(source: { name: string; file: string }, kind: SourceActionKind, requestIds: readonly string[], by: string, act: () => SourceActionResult): { entry: AuditEntry; result: SourceActionResult };
}

/**
 * Bulk actions from the dashboard: previewed by a dry run, then run in chunks with the event loop
 * free between them, each one written to the audit log (before it starts, after every chunk, and
 * when it ends). A cleanup can be undone: its archived requests are restored.
 */
export class BulkActions implements Actions {
  private readonly running = new Map<number, EntryProgress & { matched: number }>();

  constructor(
    private readonly ctx: TrackerContext,
    private readonly archive: () => ArchiveDb,
  ) {}

  private db(): ArchiveDb {
    const db = this.archive();
    ensureAuditTable(db);
    return db;
  }

  /**
   * Close the entries of actions whose process died during them; called once when a server opens.
   * Each entry was written before its last chunk began, naming the chunk: that chunk's requests are
   * looked at one by one (a half-done cleanup or restore is finished or undone), so the entry ends
   * up listing exactly the requests the action changed.
   */
  closeInterrupted(): AuditEntry[] {
    const db = this.db();
    const cut = interruptedEntries(db, (pid) => pid === process.pid || pidExists(pid));
    for (const entry of cut) {
      if (entry.kind === "source-retry" || entry.kind === "source-delete") {
        const { file } = entry.target as { file: string };
        updateEntry(db, entry.id, entry, { status: "failed", at: this.ctx.now(), error: `Interrupted: the process stopped during its one transaction on ${file}, which SQLite committed whole or not at all: look at the messages to see which.` });
        continue;
      }
      const settled = entry.inFlight.filter((id) => this.settle(entry, id));
      const progress = { ...entry, changed: entry.changed + settled.length, changedIds: [...entry.changedIds, ...settled] };
      const done = progress.changed + progress.skipped;
      updateEntry(db, entry.id, progress, {
        status: "failed",
        at: this.ctx.now(),
        error: `Interrupted: the process stopped after ${done} of ${entry.matched}. The ${progress.changed} changed are listed here; the other ${entry.matched - done} were not touched.`,
      });
    }
    return cut.map((entry) => getEntry(db, entry.id));
  }

  /** Whether the interrupted action `entry` changed request `id` (finishing or undoing a half-done change first). */
  private settle(entry: AuditEntry, id: string): boolean {
    if (entry.kind === "cleanup") return settleCleanup(this.ctx, this.archive, id, entry.id);
    if (entry.kind === "undo") return settleRestore(this.ctx, this.archive, id, entry.undoes!);
    try {
      const stamp = actedBy(entry.by, entry.id);
      return !!readRequestFile(this.ctx.dir.requestFile(id), id)?.request.transitions?.some((t) => t.by === stamp);
    } catch (error) {
      if (isReqwatchError(error, "CORRUPT_FILE")) return false;
      throw error;
    }
  }

  preview(raw: ActionInput): ActionPreview {
    const input = validate(raw);
    const summary = describeAction(input);
    if (input.kind === "retry" || input.kind === "cancel") {
      const ids = this.targetOf(input);
      const report = input.kind === "retry" ? retry(this.ctx, { ids }, { dryRun: true }) : cancel(this.ctx, ids, { dryRun: true });
      const changing = "retried" in report ? report.retried : report.cancelled;
      const byState: Partial<Record<State, number>> = {};
      for (const r of changing) byState[r.from] = (byState[r.from] ?? 0) + 1;
      const skipped: SkipSummary[] = [];
      for (const s of report.skipped) addSkip(skipped, s.reason, s.requestId);
      const previewId = this.keep(input, ids);
      return { kind: input.kind, summary, previewId, matched: report.matched, willChange: changing.length, byState, firstIds: changing.slice(0, FIRST_IDS).map((r) => r.requestId), skipped };
    }
    const report = cleanup(this.ctx, this.archive, { olderThanMs: input.olderThanMs, states: input.states, dryRun: true });
    const previewId = this.keep(input, report.ids, report.cutoff);
    return { kind: "cleanup", summary, previewId, cutoff: report.cutoff, matched: report.matched, willChange: report.matched, byState: report.byState, firstIds: report.ids.slice(0, FIRST_IDS), skipped: [] };
  }

  /**
   * Keep what a dry run fixed for its run, in the index, where every process on the folder finds it
   * (an agent's client may start a new server for the confirmation); returns the id the run names it by.
   */
  private keep(input: ActionInput, ids: string[], cutoff?: number): string {
    const now = this.ctx.now();
    const id = randomUUID();
    keepDryRun(this.ctx.db, { id, kind: input.kind, asked: askedOf(input), summary: describeAction(input), target: auditTarget(input, cutoff), ids, cutoff: cutoff ?? null, expiresAt: now + PREVIEW_TTL_MS }, now, PREVIEWS_KEPT);
    return id;
  }

  /**
   * The dry run a run names, taken for it: an unknown or expired one is refused, so nothing runs
   * unseen, and so is a run that asks otherwise, whose audit entry would not say what it did.
   */
  private dryRunFor(input: ActionInput): DryRun | null {
    if (input.preview === undefined) return null;
    const taken = takeDryRun(this.ctx.db, input.preview, askedOf(input), this.ctx.now());
    if (taken.outcome === "taken") return taken.dryRun;
    if (taken.outcome === "unknown") {
      throw new ReqwatchError("BAD_INPUT", `Dry run ${input.preview} is not known: it expired (a dry run is kept ${formatDuration(PREVIEW_TTL_MS)}), was confirmed already, or was made on another state folder. Make the dry run again.`);
    }
    const asked = describeAction(input);
    const differs = asked === taken.dryRun.summary ? `"${asked}" with other arguments than dry run ${input.preview}` : `"${asked}", but dry run ${input.preview} was "${taken.dryRun.summary}"`;
    throw new ReqwatchError("BAD_INPUT", `This confirmation asks ${differs}. Nothing was done: confirm with the dry run's own arguments, or make a new dry run.`);
  }

  /** The ids a retry or cancel acts on: those given, or those a filter matches now. */
  private targetOf(input: Extract<ActionInput, { kind: "retry" | "cancel" }>): string[] {
    if (input.kind === "cancel" || input.ids) return targetIds(this.ctx, { ids: input.ids });
    return targetIds(this.ctx, { filter: input.filter });
  }

  /** Start an action; the returned promise settles when it is done. The entry id is known at once via `onStart`. */
  async run(raw: ActionInput, options: RunOptions & { onStart?: (id: number) => void } = {}): Promise<AuditEntry> {
    const input = validate(raw);
    assertManaged(this.ctx, describeAction(input));
    const dryRun = this.dryRunFor(input);
    const by = options.by ?? "dashboard";
    if (input.kind === "retry" || input.kind === "cancel") {
      const ids = dryRun?.ids ?? this.targetOf(input);
      // The dry run's words and input: what it matched is what this run acts on.
      const described = dryRun ? { summary: dryRun.summary, target: dryRun.target } : { summary: describeAction(input), target: auditTarget(input) };
      return this.runOver(ids, { kind: input.kind, ...described }, options, (chunk, progress, entryId) => {
        const report = input.kind === "retry" ? retry(this.ctx, { ids: chunk }, { by: actedBy(by, entryId) }) : cancel(this.ctx, chunk, { by: actedBy(by, entryId) });
        const changed = "retried" in report ? report.retried : report.cancelled;
        for (const r of changed) progress.changedIds.push(r.requestId);
        for (const s of report.skipped) addSkip(progress.skipReasons, s.reason, s.requestId);
        return { changed: changed.length, skipped: report.skipped.length };
      });
    }
    const matched = dryRun ? { ids: dryRun.ids, cutoff: dryRun.cutoff! } : cleanup(this.ctx, this.archive, { olderThanMs: input.olderThanMs, states: input.states, dryRun: true });
    const described = dryRun ? { summary: dryRun.summary, target: dryRun.target } : { summary: describeAction(input), target: auditTarget(input, matched.cutoff) };
    return this.runOver(matched.ids, { kind: "cleanup", ...described }, options, (chunk, progress, entryId) => {
      // The dry run's cutoff: a request that reached it since (or changed) is skipped, not taken in.
      const report = cleanup(this.ctx, this.archive, { olderThanMs: input.olderThanMs, states: input.states, cutoff: matched.cutoff, ids: chunk, lockedPiece: options.lockedPiece, pauseMs: options.pauseMs }, entryId);
      progress.changedIds.push(...report.ids);
      const skippedIds = new Set(report.skipped.map((s) => s.requestId));
      for (const s of report.skipped) addSkip(progress.skipReasons, s.reason, s.requestId);
      // A chunk's id that no longer matched at all (changed or gone since the preview) is a skip too.
      const unmatched = chunk.filter((id) => !report.ids.includes(id) && !skippedIds.has(id));
      for (const id of unmatched) addSkip(progress.skipReasons, "changed since the dry run", id);
      return { changed: report.archived, skipped: report.skipped.length + unmatched.length };
    });
  }

  /** The dry run of an undo: how many of the copies the cleanup archived are still in the archive to restore, and which ids exist again. */
  previewUndo(entryId: number): ActionPreview {
    const original = this.undoable(entryId);
    const archive = this.archive();
    const skipped: SkipSummary[] = [];
    const restorable: string[] = [];
    for (const id of original.changedIds) {
      if (!getArchived(archive, id, entryId)) addSkip(skipped, "no longer in the archive", id);
      else if (isIndexed(this.ctx.db, id)) addSkip(skipped, "a request with this id exists again", id);
      else restorable.push(id);
    }
    return { kind: "undo", summary: `Undo #${entryId}: ${original.summary}`, previewId: "", matched: original.changedIds.length, willChange: restorable.length, byState: {}, firstIds: restorable.slice(0, FIRST_IDS), skipped };
  }

  /** A cleanup that can be undone now, or why not. */
  private undoable(entryId: number): AuditEntry {
    const db = this.db();
    const original = getEntry(db, entryId);
    if (original.kind !== "cleanup") throw new ReqwatchError("BAD_INPUT", `Entry ${entryId} is a ${original.kind}; only a cleanup can be undone.`);
    if (original.undoneAt !== null) throw new ReqwatchError("BAD_INPUT", `Entry ${entryId} was already undone.`);
    if (original.status === "running") throw new ReqwatchError("BAD_INPUT", `Entry ${entryId} is still running.`);
    const running = listEntries(db).find((entry) => entry.kind === "undo" && entry.undoes === entryId && entry.status === "running");
    if (running) throw new ReqwatchError("BAD_INPUT", `Entry ${entryId} is being undone (#${running.id}).`);
    return original;
  }

  /** Undo a cleanup: restore each copy it archived that is still in the archive, unless its id exists again. */
  async undo(entryId: number, options: RunOptions & { onStart?: (id: number) => void } = {}): Promise<AuditEntry> {
    assertManaged(this.ctx, "Undo");
    const db = this.db();
    const original = this.undoable(entryId);
    const result = await this.runOver(original.changedIds, { kind: "undo", summary: `Undo #${entryId}: ${original.summary}`, target: { entry: entryId }, undoes: entryId }, options, (chunk, progress) => {
      let changed = 0;
      let skipped = 0;
      for (const id of chunk) {
        try {
          restore(this.ctx, this.archive, id, entryId);
          progress.changedIds.push(id);
          changed++;
        } catch (error) {
          if (!isReqwatchError(error, "NOT_FOUND") && !isReqwatchError(error, "ALREADY_EXISTS")) throw error;
          addSkip(progress.skipReasons, isReqwatchError(error, "NOT_FOUND") ? "no longer in the archive" : "a request with this id exists again", id);
          skipped++;
        }
      }
      return { changed, skipped };
    });
    if (result.status === "done") markUndone(db, entryId, result.id, this.ctx.now());
    return result;
  }

  private async runOver(
    ids: string[],
    entry: { kind: AuditEntry["kind"]; summary: string; target: unknown; undoes?: number },
    options: RunOptions & { onStart?: (id: number) => void },
    step: (chunk: string[], progress: EntryProgress, entryId: number) => { changed: number; skipped: number },
  ): Promise<AuditEntry> {
    const db = this.db();
    const id = startEntry(db, { ...entry, by: options.by ?? "dashboard", matched: ids.length, at: this.ctx.now() });
    const progress = { matched: ids.length, changed: 0, skipped: 0, skipReasons: [] as SkipSummary[], changedIds: [] as string[] };
    this.running.set(id, progress);
    options.onStart?.(id);
    let chunkSize = options.chunkSize ?? FIRST_CHUNK;
    try {
      for (let start = 0; start < ids.length; ) {
        const began = performance.now();
        const chunk = ids.slice(start, start + chunkSize);
        // Write-ahead: the entry is exact up to here and names what comes next (see closeInterrupted).
        updateEntry(db, id, progress, undefined, chunk);
        const done = step(chunk, progress, id);
        start += chunk.length;
        progress.changed += done.changed;
        progress.skipped += done.skipped;
        options.onProgress?.(progress);
        if (options.chunkSize === undefined) {
          const took = Math.max(0.1, performance.now() - began);
          chunkSize = Math.max(1, Math.min(MAX_CHUNK, Math.round((chunk.length * SLICE_MS) / took)));
        }
        if (options.restMs) await sleep(options.restMs);
        else await yieldToEventLoop();
        if (options.signal?.aborted) throw new ActionStopped();
      }
      updateEntry(db, id, progress, { status: "done", at: this.ctx.now() });
    } catch (error) {
      if (error instanceof ActionStopped) throw error;
      const message = isReqwatchError(error) ? error.message : "internal error";
      updateEntry(db, id, progress, { status: "failed", at: this.ctx.now(), error: message });
    } finally {
      this.running.delete(id);
    }
    return getEntry(db, id);
  }

  /**
   * An action on another program's queue (`sourceAction`), in the audit log: written before it
   * runs (a crash leaves it running, then closed as interrupted), and finished with what it did.
   */
  recordSourceAction(source: { name: string; file: string }, kind: SourceActionKind, requestIds: readonly string[], by: string, act: () => SourceActionResult): { entry: AuditEntry; result: SourceActionResult } {
    const db = this.db();
    const summary = `${kind === "retry" ? "Retry" : "Delete"} ${requestIds.length} message${requestIds.length === 1 ? "" : "s"} of ${source.name} (${source.file})`;
    const id = startEntry(db, { kind: `source-${kind}`, by, summary, target: { source: source.name, file: source.file, ids: requestIds }, matched: requestIds.length, at: this.ctx.now() });
    try {
      const result = act();
      const skipped = result.skipped.reduce((n, skip) => n + skip.count, 0);
      updateEntry(db, id, { changed: result.changed.length, skipped, skipReasons: result.skipped, changedIds: result.changed }, { status: "done", at: this.ctx.now() });
      return { entry: getEntry(db, id), result };
    } catch (error) {
      updateEntry(db, id, { changed: 0, skipped: 0, skipReasons: [], changedIds: [] }, { status: "failed", at: this.ctx.now(), error: (error as Error).message });
      throw error;
    }
  }

  /** An entry, with live progress while it runs. */
  entry(id: number): AuditEntry {
    return this.withLiveProgress(getEntry(this.db(), id));
  }

  list(limit?: number): AuditEntry[] {
    return listEntries(this.db(), limit).map((entry) => this.withLiveProgress(entry));
  }

  /** A running action saves its progress before each step; the figures in memory include the step under way. */
  private withLiveProgress(entry: AuditEntry): AuditEntry {
    const live = this.running.get(entry.id);
    return live ? { ...entry, changed: live.changed, skipped: live.skipped } : entry;
  }
}
