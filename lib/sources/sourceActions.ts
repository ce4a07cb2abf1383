import { z } from "zod";
import type { SkipSummary } from "../model/skipSummary";
import { filterFields } from "../model/listFilters";
import { describeZodError } from "../model/requestFormat";
import { ReqwatchError } from "../model/errors";
import { claudeMemQueue, claudeMemShape, LEFT_OVER_AFTER_MS, type ClaudeMemShape } from "./claudeMem";
import { openSourceDb, sourceReadError, type SourceDb } from "../sqlite/openSourceDb";
import { lastWriteOf, readOne, type SourceQueue } from "./sourceQueue";
import type { SourceSpec } from "./sourceSpec";

/** retry: a stuck or failed message back to pending; delete: a left-over message out of a table claude-mem no longer reads. */
export type SourceActionKind = "retry" | "delete";
const SOURCE_ACTION_KINDS: readonly SourceActionKind[] = ["retry", "delete"];

/** At most this many rows per action: one short transaction. */
const MAX_SOURCE_ACTION_ROWS = 1000;

export interface SourceActionResult {
  kind: SourceActionKind;
  file: string;
  dryRun: boolean;
  /** The statement run for each row: claude-mem's own for this schema. */
  sql: string;
  matched: number;
  /** The rows changed (or, in a dry run, that would be). */
  changed: string[];
  skipped: SkipSummary[];
}

/** The statement claude-mem itself runs for the action on a table of this shape, guarded by the status read. */
function statementOf(kind: SourceActionKind, shape: ClaudeMemShape): string {
  if (kind === "delete") return "DELETE FROM pending_messages WHERE id = ? AND status = ?";
  // Its retryMessage and stuck reset clear what marks a message as being processed: the start
  // time (to v12.4.4) or the worker pid (v12.4.5-v12.4.9); from v12.5.0 the status alone.
  const cleared = ["started_processing_at_epoch", "worker_pid"].filter((column) => shape.columns.has(column) && !shape.retired);
  return `UPDATE pending_messages SET status = 'pending'${cleared.map((column) => `, ${column} = NULL`).join("")} WHERE id = ? AND status = ?`;
}

/** Why the action makes no sense on this table at all, or null. */
function refusal(kind: SourceActionKind, shape: ClaudeMemShape, leftOver: boolean): string | null {
  if (kind === "retry" && leftOver) {
    return `claude-mem no longer processes this table (from v13.4.0 its queue is in memory; schema ${shape.generation}, nothing written for an hour): a retry would put messages in a queue nobody reads. Delete the left-overs instead.`;
  }
  if (kind === "delete" && !leftOver) {
    return `claude-mem still works through this table (schema ${shape.generation}${shape.retired ? ", written within the hour" : ""}): deleting a message would lose its observation. Retry it instead.`;
  }
  return null;
}

/** Whether a row may be acted on, or why not. */
function verdict(kind: SourceActionKind, state: string, stuck: string | null): string | null {
  if (kind === "delete") return stuck?.startsWith("left over") ? null : `not left over (${state})`;
  if (state === "failed") return null;
  if (state === "processing") return stuck ? null : "processing, not stuck: its worker may still finish it";
  return state === "queued" ? "pending already" : `${state}: only a stuck or failed message goes back to pending`;
}

/**
 * Retry or delete claude-mem messages where claude-mem's own recovery does the same: a stuck or
 * failed message back to pending with its own statement, a left-over one (a table it no longer
 * reads) deleted. Each row is read again and judged, and changed, inside one short IMMEDIATE
 * transaction (a 2 s busy wait: the owner may be writing), guarded by the status read, so a
 * message the owner moved meanwhile is skipped. A dry run opens the database read-only and
 * changes nothing. Not on a mapped table: reqwatch does not know its owner's recovery.
 */
export function sourceAction(
  spec: SourceSpec,
  kind: SourceActionKind,
  requestIds: readonly string[],
  options: { dryRun: boolean; now?: number },
): SourceActionResult {
  if (spec.kind !== "claude-mem") {
    throw new ReqwatchError(
      "BAD_INPUT",
      "reqwatch acts only on claude-mem's queue, where it knows what claude-mem's own recovery does; a mapped table is read only.",
    );
  }
  if (!requestIds.length) throw new ReqwatchError("BAD_INPUT", "Name the messages to act on.");
  if (requestIds.length > MAX_SOURCE_ACTION_ROWS) throw new ReqwatchError("BAD_INPUT", `At most ${MAX_SOURCE_ACTION_ROWS} messages per action.`);
  const now = options.now ?? Date.now();
  const file = spec.file;
  const db = openSourceDb(file, "claude-mem source", { write: !options.dryRun });
  try {
    const shape = claudeMemShape(db, file);
    const queue = claudeMemQueue(shape, file);
    const sql = statementOf(kind, shape);
    const act = () => judgeAndAct(db, queue, shape, kind, sql, [...new Set(requestIds)], now, options.dryRun);
    return { kind, file, dryRun: options.dryRun, sql, matched: requestIds.length, ...(options.dryRun ? act() : db.transaction(act).immediate()) };
  } catch (error) {
    // Locked past the busy wait, or not writable: said in words; the transaction changed nothing.
    throw error instanceof ReqwatchError ? error : sourceReadError(error, file, "claude-mem source");
  } finally {
    db.close();
  }
}

function judgeAndAct(
  db: SourceDb,
  queue: SourceQueue,
  shape: ClaudeMemShape,
  kind: SourceActionKind,
  sql: string,
  ids: string[],
  now: number,
  dryRun: boolean,
): Pick<SourceActionResult, "changed" | "skipped"> {
  const lastWriteAt = lastWriteOf(db, queue);
  const leftOver = shape.retired && lastWriteAt !== null && now - lastWriteAt >= LEFT_OVER_AFTER_MS;
  const refused = refusal(kind, shape, leftOver);
  if (refused) throw new ReqwatchError("BAD_INPUT", refused);
  const write = dryRun ? null : db.prepare(sql);
  const changed: string[] = [];
  const skipped = new Map<string, string[]>();
  for (const id of ids) {
    const message = readOne(db, queue, id, now, lastWriteAt);
    const why = message ? verdict(kind, message.request.state, message.stuck) : "not in the table (deleted, or not claude-mem's)";
    if (why !== null) {
      skipped.set(why, [...(skipped.get(why) ?? []), id]);
      continue;
    }
    // Guarded by the status just read (inside the transaction for a run).
    if (write && write.run(queue.rowId(id)!, message!.stored!.status).changes !== 1) {
      skipped.set("changed by claude-mem meanwhile", [...(skipped.get("changed by claude-mem meanwhile") ?? []), id]);
      continue;
    }
    changed.push(id);
  }
  return { changed, skipped: [...skipped].map(([reason, skippedIds]) => ({ reason, count: skippedIds.length, ids: skippedIds.slice(0, 10) })) };
}

/** The body of POST /api/sources/<name>/actions. */
const sourceActionInput = z.strictObject({
  kind: z.enum(SOURCE_ACTION_KINDS),
  ids: z.array(filterFields.sessionId).min(1, "name the messages to act on").max(MAX_SOURCE_ACTION_ROWS),
  dryRun: z.boolean().default(true),
});

export type SourceActionInput = z.output<typeof sourceActionInput>;

export function parseSourceActionInput(body: unknown): SourceActionInput {
  const parsed = sourceActionInput.safeParse(body);
  if (!parsed.success) throw new ReqwatchError("BAD_INPUT", `Invalid action: ${describeZodError(parsed.error)}`);
  return parsed.data;
}
