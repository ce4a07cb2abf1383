import fs from "node:fs";
import path from "node:path";
import type { TrackerContext } from "./context";
import { asReqwatchError, ReqwatchError } from "../model/errors";
import { fsyncDir, replaceKeepingSpare, writeTempFile } from "../fs/durableWrite";
import { upsertRequest } from "../db/upsertRequest";
import { assertManaged } from "./ownership";
import { withWritersLock } from "../db/writeLock";
import { fingerprintOf, isSameFile } from "../fs/fingerprint";
import { readRequestFile, serializeRequest } from "../stateFiles/requestFile";
import type { RequestRecord } from "../model/requestFormat";
import { redactRequest } from "../model/redaction";

/**
 * Decide the next version of a request from the current one (null: no file). Return `current`
 * itself to leave the request untouched; throw to refuse (nothing is written). It may be called
 * more than once for one change (after a conflict), so it must not have effects beyond its result.
 */
type Decide = (current: RequestRecord | null) => RequestRecord | null;

/** Optimistic tries before a change is made wholly under the lock (which always succeeds). */
const OPTIMISTIC_TRIES = 3;

interface CommitOptions {
  /**
   * "full" (default): the rename is made durable (the folder is fsynced) before returning.
   * "atomic": the new content is fsynced before the rename, so a power cut leaves the old file or
   * the new one, never a torn one, but the change itself may be lost to a power cut. Only for a
   * change whose loss costs a re-run and never data: a claim (the request reads as queued again,
   * and the token fence drops any result of the lost claim).
   */
  durability?: "full" | "atomic";
  /**
   * Checked under the writers' lock just before the change is written: false sends it back to be
   * decided again on the world as it is then. For a condition outside the file that another
   * writer sets under the same lock (a claim, and a pause of its workspace).
   */
  guard?: (next: RequestRecord) => boolean;
}

/**
 * The one function through which every writer changes a request file.
 *
 * Optimistic, so that the slow part (fsync) never holds the writers' lock: read the file, decide,
 * write and fsync a temp file; then, holding the lock (BEGIN IMMEDIATE on index.db and
 * writers.lock, serialized across processes and dropped by the OS if the process dies; a lost
 * index is reopened first, lib/db/writeLock.ts), check the file is still the one that was read,
 * update the index, rename the temp over it, commit; then fsync the folder before
 * returning. A file changed meanwhile is a conflict: the change is decided again on the new file.
 * Inside a caller's transaction, or after repeated conflicts, everything happens under the lock.
 * In a folder reqwatch only observes, a decision to write is refused (READ_ONLY); reading is not.
 * Secrets in the text a change brings are redacted here (lib/model/redaction.ts), so every writer's
 * text is; the version returned is the one written.
 */
export function commitChange(ctx: TrackerContext, requestId: string, decide: Decide, options: CommitOptions = {}): RequestRecord | null {
  const file = ctx.dir.requestFile(requestId);
  const durable = (options.durability ?? "full") === "full";
  let committed: RequestRecord | null | typeof CONFLICT = CONFLICT;
  try {
    if (!ctx.db.inTransaction) {
      for (let attempt = 0; attempt < OPTIMISTIC_TRIES && committed === CONFLICT; attempt++) {
        committed = tryOptimistic(ctx, requestId, file, decide, durable, options.guard);
      }
    }
    if (committed === CONFLICT) committed = withWritersLock(ctx, () => commitLocked(ctx, requestId, file, decide), { restartable: true });
  } catch (error) {
    throw asReqwatchError(error);
  }
  if (committed) ctx.onCommit?.(committed);
  return committed;
}

const CONFLICT = Symbol("conflict");

function tryOptimistic(
  ctx: TrackerContext,
  requestId: string,
  file: string,
  decide: Decide,
  durable: boolean,
  guard?: (next: RequestRecord) => boolean,
): RequestRecord | null | typeof CONFLICT {
  const read = readRequestFile(file, requestId);
  const current = read?.request ?? null;
  const decided = decide(current);
  if (decided === current || decided === null) return decided;
  const next = toWrite(ctx, requestId, current, decided);
  const temp = writeTempFile(file, serializeRequest(next));
  let renamed = false;
  try {
    const won = withWritersLock(
      ctx,
      () => {
        if (!isSameFile(file, read?.fingerprint ?? null) || (guard && !guard(next))) return false;
        // Index first: if the rename fails, the rollback leaves both as they were.
        upsertRequest(ctx.db, next, fingerprintOf(temp.stat));
        replaceKeepingSpare(temp.path, file);
        renamed = true;
        return true;
      },
      { restartable: true },
    );
    if (!won) return CONFLICT;
  } finally {
    if (!renamed) fs.rmSync(temp.path, { force: true });
  }
  if (durable) fsyncDir(path.dirname(file));
  return next;
}

/**
 * The whole change under a lock the caller holds (so `decide` itself sees what a guard would).
 * Index first, then the rename, as in tryOptimistic: a write that fails in the index (a damaged
 * one) has not changed the file, and runs again whole on the reopened index.
 */
function commitLocked(ctx: TrackerContext, requestId: string, file: string, decide: Decide): RequestRecord | null {
  const current = readRequestFile(file, requestId)?.request ?? null;
  const decided = decide(current);
  if (decided === current || decided === null) return decided;
  const next = toWrite(ctx, requestId, current, decided);
  const temp = writeTempFile(file, serializeRequest(next));
  try {
    upsertRequest(ctx.db, next, fingerprintOf(temp.stat));
    replaceKeepingSpare(temp.path, file);
  } catch (error) {
    fs.rmSync(temp.path, { force: true });
    throw error;
  }
  fsyncDir(path.dirname(file));
  return next;
}

/** A decided version checked (same id, a folder reqwatch manages) and with its new text's secrets redacted: what goes to the file and the index. */
function toWrite(ctx: TrackerContext, requestId: string, current: RequestRecord | null, decided: RequestRecord): RequestRecord {
  assertSameId(requestId, decided);
  assertManaged(ctx);
  return redactRequest(ctx.options.redaction, current, decided);
}

function assertSameId(requestId: string, next: RequestRecord): void {
  if (next.requestId !== requestId) {
    throw new ReqwatchError("BAD_INPUT", `A change to ${requestId} cannot rename it to ${next.requestId}.`);
  }
}
