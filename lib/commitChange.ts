import type { TrackerContext } from "./context";
import { ReqwatchError } from "./errors";
import { writeFileDurable } from "./fs/durableWrite";
import { upsertRequest } from "./index/upsertRequest";
import { fingerprintOf, readRequestFile, serializeRequest } from "./requestFile";
import type { RequestRecord } from "./schema";

/**
 * Decide the next version of a request from the current one (null: no file). Return `current`
 * itself to leave the request untouched; throw to refuse (nothing is written).
 */
export type Decide = (current: RequestRecord | null) => RequestRecord | null;

/**
 * The one function through which every writer changes a request file. Inside a BEGIN IMMEDIATE
 * transaction on index.db (the writers' lock, held across processes and dropped by the OS if the
 * process dies): read the file, decide, write it durably, update the index, commit.
 */
export function commitChange(ctx: TrackerContext, requestId: string, decide: Decide): RequestRecord | null {
  const file = ctx.dir.requestFile(requestId);
  const run = ctx.db.transaction(() => {
    const current = readRequestFile(file, requestId)?.request ?? null;
    const next = decide(current);
    if (next === current || next === null) return next;
    if (next.requestId !== requestId) {
      throw new ReqwatchError("BAD_INPUT", `A change to ${requestId} cannot rename it to ${next.requestId}.`);
    }
    upsertRequest(ctx.db, next, fingerprintOf(writeFileDurable(file, serializeRequest(next))));
    return next;
  });
  let committed: RequestRecord | null;
  try {
    committed = run.immediate();
  } catch (error) {
    throw asReqwatchError(error);
  }
  // Inside an outer transaction (claimNext's), the commit is the outer one's; listeners hear of it a moment early.
  if (committed) ctx.onCommit?.(committed);
  return committed;
}

/** Runs `fn` holding the writers' lock (for sweeps that must not race a writer). */
export function withWritersLock<T>(ctx: TrackerContext, fn: () => T): T {
  try {
    return ctx.db.transaction(fn).immediate();
  } catch (error) {
    throw asReqwatchError(error);
  }
}

export function asReqwatchError(error: unknown): ReqwatchError {
  if (error instanceof ReqwatchError) return error;
  const code = (error as { code?: string }).code;
  if (code === "SQLITE_BUSY") {
    return new ReqwatchError("LOCKED", "Another writer held the state directory's lock for too long; try again.", undefined, { cause: error });
  }
  if (code === "ENOSPC") {
    return new ReqwatchError("IO_ERROR", "The disk is full; nothing was changed.", undefined, { cause: error });
  }
  // System errors name absolute paths; say only what failed, so the message is safe to show anywhere.
  const syscall = (error as { syscall?: string }).syscall;
  const what = code ? `${syscall ?? "I/O"} ${code}` : ((error as Error)?.message ?? String(error));
  return new ReqwatchError("IO_ERROR", `The write failed (${what}); nothing was changed.`, undefined, { cause: error });
}
