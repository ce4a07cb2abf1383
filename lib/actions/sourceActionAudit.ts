import type { ArchiveDb } from "../db/archive";
import { getEntry, startEntry, updateEntry, type AuditEntry } from "../db/auditLog";
import type { SourceActionKind, SourceActionResult } from "../sources/sourceActions";
import type { TrackerContext } from "../store/context";
import { nameIds } from "./describeAction";

/**
 * An action on another program's queue (`sourceAction`), in the audit log: written before it
 * runs (a crash leaves it running, then closed as interrupted), and finished with what it did.
 */
export function recordSourceAction(
  ctx: TrackerContext,
  auditDb: ArchiveDb,
  source: { name: string; file: string },
  kind: SourceActionKind,
  requestIds: readonly string[],
  by: string,
  act: () => SourceActionResult,
): { entry: AuditEntry; result: SourceActionResult } {
  // Named as the folder's actions are: the ids, a few by name.
  const ids = requestIds.length === 1 ? requestIds[0] : `${requestIds.length} messages: ${nameIds(requestIds)}`;
  const summary = `${kind === "retry" ? "Retry" : "Delete"} ${ids} of ${source.name} (${source.file})`;
  const id = startEntry(auditDb, {
    kind: `source-${kind}`,
    by,
    summary,
    target: { source: source.name, file: source.file, ids: requestIds },
    matched: requestIds.length,
    at: ctx.now(),
  });
  try {
    const result = act();
    const skipped = result.skipped.reduce((n, skip) => n + skip.count, 0);
    updateEntry(
      auditDb,
      id,
      { changed: result.changed.length, skipped, skipReasons: result.skipped, changedIds: result.changed },
      { status: "done", at: ctx.now() },
    );
    return { entry: getEntry(auditDb, id), result };
  } catch (error) {
    updateEntry(auditDb, id, { changed: 0, skipped: 0, skipReasons: [], changedIds: [] }, { status: "failed", at: ctx.now(), error: (error as Error).message });
    throw error;
  }
}
