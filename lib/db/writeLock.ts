import { asReqwatchError, isReqwatchError } from "../model/errors";
import { sleepSync } from "../process/sleepSync";
import { LOCK_TIMEOUT_MS, type IndexDb } from "./openIndex";
import { statement } from "./statements";

function isBusy(error: unknown): boolean {
  return (error as { code?: string }).code === "SQLITE_BUSY";
}

/** SQLite found the index's pages damaged (index.db overwritten while it was open), here or in what a ReqwatchError wraps. */
function isDamagedIndex(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  if (typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB")) return true;
  return isReqwatchError(error) && error.cause !== undefined && isDamagedIndex(error.cause);
}

/** Why the connection a writer holds is not the state folder's index any more. */
export interface IndexLoss {
  kind: "deleted" | "replaced" | "corrupt";
  message: string;
}

/**
 * What a tracker does for its writers about a lost index (lib/roles/openFolder.ts). `lost` is asked under
 * the writers' lock before every write (a stat: is `db` still the file at index.db's path?);
 * `reopen` puts the index there now into `db` (rebuilt from the files if it is new, reconciled
 * with them if another process made it), so the write goes where every other process reads.
 */
export interface IndexKeeper {
  lost(): IndexLoss | null;
  reopen(loss: IndexLoss): void;
}

/** A tracker's index as its operations hold it (TrackerContext): `db` is replaced when the index is reopened. */
export interface IndexHolder {
  readonly db: IndexDb;
  readonly keeper?: IndexKeeper;
}

/** The index a writer holds: a bare connection, or a holder (whose `db` fn reads again, after a reopen). */
type WriteTarget = IndexDb | IndexHolder;

function isConnection(target: WriteTarget): target is IndexDb {
  return typeof (target as IndexDb).prepare === "function";
}

interface WriteOptions {
  /**
   * `fn` may run again after the index was found damaged inside it: it changes nothing outside the
   * index before its index writes succeed (commitChange renames a file after its upsert). A damaged
   * index found at the commit, after `fn` did its work, is rebuilt from the files, which hold that work.
   */
  restartable?: boolean;
}

/** Tries of one write across index losses: a third loss inside one write is reported rather than chased. */
const LOSS_TRIES = 3;

/**
 * Run `fn` holding the writers' lock: a write transaction (BEGIN IMMEDIATE, across processes),
 * waited for in short steps. The transaction also locks `writers.lock` (attached to every index
 * connection, lib/db/openIndex.ts), a file reqwatch never deletes or replaces: writers exclude
 * each other even when they hold different index.db files (one deleted while they ran). With a
 * keeper, the index is checked under the lock before `fn` runs, and a lost or damaged one is
 * reopened first (see IndexKeeper). SQLite's own busy handler sleeps 1, 2, 5, 10… ms between
 * tries, many times longer than a writer here holds the lock, so a writer that lost a race slept
 * through several of the other's critical sections; here a waiter tries again after 20 µs,
 * doubling up to 1 ms. Inside a caller's transaction, `fn` runs in a savepoint of it. A failure is
 * thrown as a ReqwatchError (LOCKED, NO_SPACE, IO_ERROR) unless it already is one.
 */
export function withWritersLock<T>(target: WriteTarget, fn: () => T, options: WriteOptions = {}): T {
  const keeper = isConnection(target) ? undefined : target.keeper;
  const current = () => (isConnection(target) ? target : target.db);
  try {
    if (current().inTransaction) return current().transaction(fn)();
    for (let tries = 1; ; tries++) {
      const db = current();
      acquire(db);
      let ran: { result: T } | null = null;
      try {
        const loss = keeper?.lost() ?? null;
        if (loss && tries < LOSS_TRIES) {
          statement(db, "ROLLBACK").run();
          keeper!.reopen(loss);
          continue;
        }
        ran = { result: fn() };
        statement(db, "COMMIT").run();
        return ran.result;
      } catch (error) {
        rollbackQuietly(db);
        if (!keeper || !isDamagedIndex(error) || tries >= LOSS_TRIES) throw error;
        keeper.reopen({ kind: "corrupt", message: "index.db is damaged: SQLite found it corrupt during a write" });
        if (!options.restartable) throw error;
        // Damaged at the commit: what fn did to the files is done, and the rebuilt index read it.
        if (ran) return ran.result;
      }
    }
  } catch (error) {
    throw asReqwatchError(error);
  }
}

/** Roll back what a failed write left open; a damaged index may refuse even that, and is reopened after. */
function rollbackQuietly(db: IndexDb): void {
  if (!db.inTransaction) return;
  try {
    statement(db, "ROLLBACK").run();
  } catch {
    // The connection is dropped by the reopen that follows; the error reported is the write's.
  }
}

/** Run `fn` with SQLite's own busy wait off (an attempt on a held lock fails at once), then put it back. */
function withoutBusyWait<T>(db: IndexDb, fn: () => T): T {
  statement(db, "PRAGMA busy_timeout = 0").run();
  try {
    return fn();
  } finally {
    statement(db, `PRAGMA busy_timeout = ${LOCK_TIMEOUT_MS}`).run();
  }
}

function acquire(db: IndexDb): void {
  const begin = statement(db, "BEGIN IMMEDIATE");
  withoutBusyWait(db, () => {
    const deadline = performance.now() + LOCK_TIMEOUT_MS;
    for (let wait = 0.02; ; wait = Math.min(wait * 2, 1)) {
      try {
        begin.run();
        return;
      } catch (error) {
        if (!isBusy(error) || performance.now() >= deadline) throw error;
      }
      sleepSync(wait);
    }
  });
}

/**
 * Whether the writers' lock is free right now (taken and released at once, never waited for). An
 * event-loop process checks this before a write it can put off, instead of sleeping in `withWritersLock`
 * (which blocks its whole event loop) while busy workers keep the lock.
 */
export function writersLockFree(db: IndexDb): boolean {
  if (db.inTransaction) return true;
  return withoutBusyWait(db, () => {
    try {
      statement(db, "BEGIN IMMEDIATE").run();
    } catch (error) {
      if (isBusy(error)) return false;
      throw error;
    }
    statement(db, "ROLLBACK").run();
    return true;
  });
}
