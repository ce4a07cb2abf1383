import { asReqwatchError } from "../model/errors";
import { sleepSync } from "../process/sleepSync";
import { LOCK_TIMEOUT_MS, type IndexDb } from "./openIndex";
import { statement } from "./statements";



function isBusy(error: unknown): boolean {
  return (error as { code?: string }).code === "SQLITE_BUSY";
}

/**
 * Run `fn` holding the writers' lock: a write transaction (BEGIN IMMEDIATE, across processes),
 * waited for in short steps. SQLite's own busy handler sleeps 1, 2, 5, 10… ms between tries, many
 * times longer than a writer here holds the lock, so a writer that lost a race slept through
 * several of the other's critical sections; here a waiter tries again after 20 µs, doubling up to
 * 1 ms. Inside a caller's transaction, `fn` runs in a savepoint of it. A failure is thrown as a
 * ReqwatchError (LOCKED, NO_SPACE, IO_ERROR) unless it already is one.
 */
export function withWritersLock<T>(db: IndexDb, fn: () => T): T {
  try {
    if (db.inTransaction) return db.transaction(fn)();
    acquire(db);
    try {
      const result = fn();
      statement(db, "COMMIT").run();
      return result;
    } catch (error) {
      if (db.inTransaction) statement(db, "ROLLBACK").run();
      throw error;
    }
  } catch (error) {
    throw asReqwatchError(error);
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
