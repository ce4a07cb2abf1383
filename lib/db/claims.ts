import type { IndexDb } from "./openIndex";
import { statement } from "./statements";
import { withWritersLock, type IndexHolder } from "./writeLock";

const READY = `SELECT id FROM requests WHERE state = 'queued' AND (not_before IS NULL OR not_before <= ?)
  AND (reserved_until IS NULL OR reserved_until <= ?) ORDER BY state_since, id LIMIT 1`;
// While some workspaces are paused (a JSON array), the oldest ready request of each of the others,
// found by walking the workspaces that have a queue (one index seek each), then the oldest of those:
// a paused workspace's backlog is never scanned.
const READY_UNPAUSED = `WITH RECURSIVE queues(workspace) AS (
    SELECT (SELECT workspace FROM requests INDEXED BY requests_queued_by_workspace WHERE state = 'queued' ORDER BY workspace LIMIT 1)
    UNION ALL
    SELECT (SELECT workspace FROM requests INDEXED BY requests_queued_by_workspace WHERE state = 'queued' AND workspace > queues.workspace ORDER BY workspace LIMIT 1)
    FROM queues WHERE queues.workspace IS NOT NULL
  )
  SELECT r.id FROM queues JOIN requests r ON r.rowid = (
    SELECT rowid FROM requests INDEXED BY requests_queued_by_workspace WHERE state = 'queued' AND workspace = queues.workspace AND (not_before IS NULL OR not_before <= ?)
      AND (reserved_until IS NULL OR reserved_until <= ?) ORDER BY state_since, id LIMIT 1)
  WHERE queues.workspace NOT IN (SELECT value FROM json_each(?))
  ORDER BY r.state_since, r.id LIMIT 1`;
const READY_IN_WORKSPACE = `SELECT id FROM requests WHERE state = 'queued' AND (not_before IS NULL OR not_before <= ?)
  AND (reserved_until IS NULL OR reserved_until <= ?) AND workspace = ? ORDER BY state_since, id LIMIT 1`;

/**
 * Reserve the oldest ready, unreserved `queued` request until `until` for process `pid`: a quick
 * step under the writers' lock, index only. Null when none is ready. `paused` workspaces are
 * skipped (the caller refuses a claim from a paused workspace it names).
 */
export function reserveOldestReady(
  index: IndexHolder,
  workspace: string | undefined,
  paused: readonly string[],
  now: number,
  until: number,
  pid: number,
): string | null {
  return withWritersLock(index, () => {
    const { db } = index;
    const id = (
      workspace !== undefined
        ? statement(db, READY_IN_WORKSPACE).pluck().get(now, now, workspace)
        : paused.length
          ? statement(db, READY_UNPAUSED).pluck().get(now, now, JSON.stringify(paused))
          : statement(db, READY).pluck().get(now, now)
    ) as string | undefined;
    if (id === undefined) return null;
    statement(db, "UPDATE requests SET reserved_until = ?, reserved_by = ? WHERE id = ?").run(until, pid, id);
    return id;
  });
}

/** Give up process `pid`'s reservation of a request (another process's is left alone). */
export function releaseReservation(db: IndexDb, id: string, pid: number): void {
  statement(db, "UPDATE requests SET reserved_until = NULL, reserved_by = NULL WHERE id = ? AND reserved_by = ?").run(id, pid);
}

/** Set a claim's heartbeat; false when `token` is not the request's current claim. */
export function renewHeartbeat(index: IndexHolder, id: string, token: string, now: number): boolean {
  return (
    withWritersLock(index, () =>
      statement(index.db, "UPDATE requests SET heartbeat_at = ? WHERE id = ? AND state = 'processing' AND claim_token = ?").run(now, id, token),
    ).changes > 0
  );
}
