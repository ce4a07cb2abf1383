import type { ArchiveDb } from "../db/archive";
import { ensureAuditTable, recordEntry } from "../db/auditLog";
import { recordQueueChange } from "../db/changes";
import { withWritersLock } from "../db/writeLock";
import { readPauses, removePause, writePause, type Pause } from "../stateFiles/pauseFile";
import { assertWorkspace } from "../model/ids";
import type { TrackerContext } from "../store/context";
import { assertManaged } from "../store/ownership";

export interface PauseOptions {
  /** Who paused it, for the audit log and the header (default `library`; the CLI says `cli`, the dashboard `dashboard`). */
  by?: string;
  reason?: string;
}

export interface PauseOutcome {
  pause: Pause;
  /** False when the workspace was paused already (its pause is unchanged). */
  changed: boolean;
}

/**
 * Pause a workspace's queue: from now on no claim takes a request from it (work already claimed
 * finishes), and the monitor does not count its wait as stuck. Kept as a file in the state folder,
 * so it survives restarts and index rebuilds; a workspace with no requests yet can be paused too.
 */
export function pauseWorkspace(ctx: TrackerContext, archive: () => ArchiveDb, workspace: string, options: PauseOptions = {}): PauseOutcome {
  assertWorkspace(workspace);
  assertManaged(ctx, `Pausing workspace ${workspace}`);
  const at = ctx.now();
  const by = options.by ?? "library";
  const reason = options.reason?.trim() || null;
  // Under the writers' lock a claim commits under: every claim after this sees the file. The check
  // too, so of two pauses at once one writes and the other says it was paused already.
  const current = withWritersLock(ctx, () => {
    const existing = readPauses(ctx.dir).find((pause) => pause.workspace === workspace);
    if (existing) return existing;
    writePause(ctx.dir, { workspace, pausedAt: at, by, reason });
    recordQueueChange(ctx.db, workspace, at);
    return null;
  });
  if (current) return { pause: current, changed: false };
  audit(archive, "pause", by, `Pause workspace ${workspace}${reason ? `: ${reason}` : ""}`, { workspace, reason }, at);
  return { pause: { workspace, pausedAt: at, by, reason }, changed: true };
}

/** Resume a paused workspace: workers take from it again at their next claim. False when it was not paused. */
export function resumeWorkspace(ctx: TrackerContext, archive: () => ArchiveDb, workspace: string, options: { by?: string } = {}): boolean {
  assertWorkspace(workspace);
  assertManaged(ctx, `Resuming workspace ${workspace}`);
  const at = ctx.now();
  const removed = withWritersLock(ctx, () => {
    const gone = removePause(ctx.dir, workspace);
    if (gone) recordQueueChange(ctx.db, workspace, at);
    return gone;
  });
  if (removed) audit(archive, "resume", options.by ?? "library", `Resume workspace ${workspace}`, { workspace }, at);
  return removed;
}

function audit(archive: () => ArchiveDb, kind: "pause" | "resume", by: string, summary: string, target: unknown, at: number): void {
  const db = archive();
  ensureAuditTable(db);
  recordEntry(db, { kind, by, summary, target, at });
}
