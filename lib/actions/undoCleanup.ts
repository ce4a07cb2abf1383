import { getArchived, type ArchiveDb } from "../db/archive";
import { getEntry, listEntries, markUndone, type AuditEntry, type SkipSummary } from "../db/auditLog";
import { isIndexed } from "../db/requestFingerprints";
import { restore } from "../cleanup/cleanup";
import { ReqwatchError, isReqwatchError } from "../model/errors";
import type { TrackerContext } from "../store/context";
import { assertManaged } from "../store/ownership";
import { FIRST_IDS, addSkip, type ActionDryRun } from "./actionDryRun";
import type { PacedRunner, StartedRunOptions } from "./pacedRunner";

/** A cleanup that can be undone now, or why not. */
function undoable(auditDb: ArchiveDb, entryId: number): AuditEntry {
  const original = getEntry(auditDb, entryId);
  if (original.kind !== "cleanup") throw new ReqwatchError("BAD_INPUT", `Entry ${entryId} is a ${original.kind}; only a cleanup can be undone.`);
  if (original.undoneAt !== null) throw new ReqwatchError("BAD_INPUT", `Entry ${entryId} was already undone.`);
  if (original.status === "running") throw new ReqwatchError("BAD_INPUT", `Entry ${entryId} is still running.`);
  const running = listEntries(auditDb).find((entry) => entry.kind === "undo" && entry.undoes === entryId && entry.status === "running");
  if (running) throw new ReqwatchError("BAD_INPUT", `Entry ${entryId} is being undone (#${running.id}).`);
  return original;
}

/** The dry run of an undo: how many of the copies the cleanup archived are still in the archive to restore, and which ids exist again. */
export function dryRunUndo(ctx: TrackerContext, auditDb: () => ArchiveDb, entryId: number): ActionDryRun {
  const archive = auditDb();
  const original = undoable(archive, entryId);
  const skipped: SkipSummary[] = [];
  const restorable: string[] = [];
  for (const id of original.changedIds) {
    if (!getArchived(archive, id, entryId)) addSkip(skipped, "no longer in the archive", id);
    else if (isIndexed(ctx.db, id)) addSkip(skipped, "a request with this id exists again", id);
    else restorable.push(id);
  }
  return {
    kind: "undo",
    summary: `Undo #${entryId}: ${original.summary}`,
    dryRunId: "",
    matched: original.changedIds.length,
    willChange: restorable.length,
    byState: {},
    firstIds: restorable.slice(0, FIRST_IDS),
    skipped,
  };
}

/** Undo a cleanup: restore each copy it archived that is still in the archive, unless its id exists again. */
export async function undoCleanup(
  ctx: TrackerContext,
  archive: () => ArchiveDb,
  auditDb: () => ArchiveDb,
  runner: PacedRunner,
  entryId: number,
  options: StartedRunOptions,
): Promise<AuditEntry> {
  assertManaged(ctx, "Undo");
  const db = auditDb();
  const original = undoable(db, entryId);
  const result = await runner.run(
    original.changedIds,
    { kind: "undo", summary: `Undo #${entryId}: ${original.summary}`, target: { entry: entryId }, undoes: entryId },
    options,
    (chunk, progress) => {
      let changed = 0;
      let skipped = 0;
      for (const id of chunk) {
        try {
          restore(ctx, archive, id, entryId);
          progress.changedIds.push(id);
          changed++;
        } catch (error) {
          if (!isReqwatchError(error, "NOT_FOUND") && !isReqwatchError(error, "ALREADY_EXISTS")) throw error;
          addSkip(progress.skipReasons, isReqwatchError(error, "NOT_FOUND") ? "no longer in the archive" : "a request with this id exists again", id);
          skipped++;
        }
      }
      return { changed, skipped };
    },
  );
  if (result.status === "done") markUndone(db, entryId, result.id, ctx.now());
  return result;
}
