import { setImmediate as yieldToEventLoop, setTimeout as sleep } from "node:timers/promises";
import type { ArchiveDb } from "../db/archive";
import { getEntry, startEntry, updateEntry, type AuditEntry, type EntryProgress, type SkipSummary } from "../db/auditLog";
import { isReqwatchError } from "../model/errors";
import type { TrackerContext } from "../store/context";

interface RunOptions {
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

/** A run's options with the callback that learns its audit entry's id as soon as it is written. */
export type StartedRunOptions = RunOptions & { onStart?: (id: number) => void };

/** One step of a run: act on `chunk`, adding to `progress` the ids changed and the skips' reasons. */
type RunStep = (chunk: string[], progress: EntryProgress, entryId: number) => { changed: number; skipped: number };

/** A run stopped by its signal, between two steps. */
export class ActionStopped extends Error {
  constructor() {
    super("The action stopped: its tracker closed.");
  }
}

/** A step's target duration when the size is not fixed: short enough that a page's other requests barely wait. */
const SLICE_MS = 40;
const FIRST_CHUNK = 10;
const MAX_CHUNK = 500;

/**
 * Runs an action over its ids in steps with the event loop free between them, writing its audit
 * entry before it starts, before every step (naming the step: see closeInterrupted) and when it ends.
 */
export class PacedRunner {
  readonly #running = new Map<number, EntryProgress & { matched: number }>();
  readonly #ctx: TrackerContext;
  readonly #auditDb: () => ArchiveDb;

  constructor(ctx: TrackerContext, auditDb: () => ArchiveDb) {
    this.#ctx = ctx;
    this.#auditDb = auditDb;
  }

  async run(
    ids: string[],
    entry: { kind: AuditEntry["kind"]; summary: string; target: unknown; undoes?: number },
    options: StartedRunOptions,
    step: RunStep,
  ): Promise<AuditEntry> {
    const db = this.#auditDb();
    const id = startEntry(db, { ...entry, by: options.by ?? "dashboard", matched: ids.length, at: this.#ctx.now() });
    const progress = { matched: ids.length, changed: 0, skipped: 0, skipReasons: [] as SkipSummary[], changedIds: [] as string[] };
    this.#running.set(id, progress);
    options.onStart?.(id);
    let chunkSize = options.chunkSize ?? FIRST_CHUNK;
    try {
      for (let start = 0; start < ids.length;) {
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
      updateEntry(db, id, progress, { status: "done", at: this.#ctx.now() });
    } catch (error) {
      if (error instanceof ActionStopped) throw error;
      const message = isReqwatchError(error) ? error.message : "internal error";
      updateEntry(db, id, progress, { status: "failed", at: this.#ctx.now(), error: message });
    } finally {
      this.#running.delete(id);
    }
    return getEntry(db, id);
  }

  /** A running action saves its progress before each step; the figures in memory include the step under way. */
  withLiveProgress(entry: AuditEntry): AuditEntry {
    const live = this.#running.get(entry.id);
    return live ? { ...entry, changed: live.changed, skipped: live.skipped } : entry;
  }
}
