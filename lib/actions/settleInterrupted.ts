import type { ArchiveDb } from "../db/archive";
import { getEntry, interruptedEntries, updateEntry, type AuditEntry } from "../db/auditLog";
import { settleCleanup, settleRestore } from "../cleanup/cleanup";
import { readRequestFile } from "../stateFiles/requestFile";
import { isReqwatchError } from "../model/errors";
import { pidExists } from "../process/liveness";
import type { TrackerContext } from "../store/context";
import { actedBy } from "./describeAction";

/** Whether the interrupted action `entry` changed request `id` (finishing or undoing a half-done change first). */
function settle(ctx: TrackerContext, archive: () => ArchiveDb, entry: AuditEntry, id: string): boolean {
  if (entry.kind === "cleanup") return settleCleanup(ctx, archive, id, entry.id);
  if (entry.kind === "undo") return settleRestore(ctx, archive, id, entry.undoes!);
  try {
    const stamp = actedBy(entry.by, entry.id);
    return !!readRequestFile(ctx.dir.requestFile(id), id)?.request.transitions?.some((t) => t.by === stamp);
  } catch (error) {
    if (isReqwatchError(error, "CORRUPT_FILE")) return false;
    throw error;
  }
}

/**
 * Close the entries of actions whose process died during them; called once when a server opens.
 * Each entry was written before its last chunk began, naming the chunk: that chunk's requests are
 * looked at one by one (a half-done cleanup or restore is finished or undone), so the entry ends
 * up listing exactly the requests the action changed.
 */
export function closeInterrupted(ctx: TrackerContext, archive: () => ArchiveDb, auditDb: ArchiveDb): AuditEntry[] {
  const cut = interruptedEntries(auditDb, (pid) => pid === process.pid || pidExists(pid));
  for (const entry of cut) {
    if (entry.kind === "source-retry" || entry.kind === "source-delete") {
      const { file } = entry.target as { file: string };
      updateEntry(auditDb, entry.id, entry, {
        status: "failed",
        at: ctx.now(),
        error: `Interrupted: the process stopped during its one transaction on ${file}, which SQLite committed whole or not at all: look at the messages to see which.`,
      });
      continue;
    }
    const settled = entry.inFlight.filter((id) => settle(ctx, archive, entry, id));
    const progress = { ...entry, changed: entry.changed + settled.length, changedIds: [...entry.changedIds, ...settled] };
    const done = progress.changed + progress.skipped;
    updateEntry(auditDb, entry.id, progress, {
      status: "failed",
      at: ctx.now(),
      error: `Interrupted: the process stopped after ${done} of ${entry.matched}. The ${progress.changed} changed are listed here; the other ${entry.matched - done} were not touched.`,
    });
  }
  return cut.map((entry) => getEntry(auditDb, entry.id));
}
