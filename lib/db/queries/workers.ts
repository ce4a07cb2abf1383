import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

/** A worker process as its claims recorded it, with what it did. */
export interface WorkerRow {
  /** Null for claims written before claims recorded their process: such a worker is known by name only. */
  pid: number | null;
  host: string | null;
  processStartedAt: number | null;
  /** The name it claimed under (`runWorker`'s `name`, else `pid <n>`). */
  name: string | null;
  firstSeen: number;
  lastSeen: number;
  completed: number;
  /** Attempts it reported failed (to be retried, or for good). */
  failed: number;
  /** Attempts the monitor ended for it: released when it was gone or had no heartbeat, or timed out. */
  released: number;
  /** Attempts it has not finished, by its claims' history. */
  running: number;
  /** Requests in processing under its claim now, and their latest heartbeat. */
  holding: number;
  heartbeatAt: number | null;
}

/**
 * Every worker seen in the claims of the requests indexed, most recently seen first. A worker is a
 * process (host, pid and start time, so a recycled pid is another worker); one known by name only
 * is grouped by its name.
 */
export function listWorkers(db: IndexDb, limit = 500): WorkerRow[] {
  return statement(
    db,
    `WITH seen AS (
       SELECT pid, host, process_started_at AS processStartedAt, max(worker_name) AS name,
         min(claimed_at) AS firstSeen, max(coalesce(ended_at, claimed_at)) AS lastSeen,
         count(*) FILTER (WHERE outcome = 'completed') AS completed, count(*) FILTER (WHERE outcome = 'failed') AS failed,
         count(*) FILTER (WHERE outcome IN ('released', 'timed out')) AS released, count(*) FILTER (WHERE outcome IS NULL) AS running
       FROM attempts
       GROUP BY host, pid, process_started_at, CASE WHEN pid IS NULL THEN worker_name END
       ORDER BY lastSeen DESC LIMIT ?
     ), held AS (
       SELECT claim_pid AS pid, claim_host AS host, claim_process_started_at AS started, count(*) AS holding, max(heartbeat_at) AS heartbeatAt
       FROM requests WHERE state = 'processing' AND claim_token IS NOT NULL GROUP BY 1, 2, 3
     )
     SELECT seen.*, coalesce(held.holding, 0) AS holding, held.heartbeatAt
     FROM seen LEFT JOIN held ON held.pid = seen.pid AND held.host IS seen.host AND held.started IS seen.processStartedAt
     ORDER BY seen.lastSeen DESC`,
  ).all(limit) as WorkerRow[];
}

/** The requests a worker left: held now, or ended by the monitor for it (released, timed out), newest first. */
export function unfinishedBy(
  db: IndexDb,
  worker: { pid: number; host: string | null; processStartedAt: number | null },
  limit = 20,
): { requestId: string; claimedAt: number; outcome: string | null }[] {
  return statement(
    db,
    `SELECT request_id AS requestId, claimed_at AS claimedAt, outcome FROM attempts
     WHERE pid = ? AND host IS ? AND process_started_at IS ? AND (outcome IS NULL OR outcome IN ('released', 'timed out'))
     ORDER BY claimed_at DESC LIMIT ?`,
  ).all(worker.pid, worker.host, worker.processStartedAt, limit) as { requestId: string; claimedAt: number; outcome: string | null }[];
}
