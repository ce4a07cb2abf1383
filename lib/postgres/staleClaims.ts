import { formatDuration } from "../model/duration";
import type { RequestRecord } from "../model/requestFormat";
import { applyChange } from "../model/transition";
import type { SharedTracker } from "../types";

export type WorkerResult = Parameters<SharedTracker["recordResult"]>[2];

/** A live claim whose heartbeat is past the timeout, as the claims table has it. */
export interface StaleClaim {
  token: string;
  request_id: string;
  worker: string;
  host: string;
  heartbeat_at: string;
  result: WorkerResult | null;
}

/** The live claims with no heartbeat since $1, oldest silence first. */
export const STALE_CLAIMS = `SELECT token, request_id, worker, host, heartbeat_at, result FROM claims
  WHERE ended_at IS NULL AND heartbeat_at < $1 ORDER BY heartbeat_at`;

/**
 * Ends a claim only if it is still live and still silent: a heartbeat and this update take the same
 * row lock, so either the beat lands first (nothing is taken back) or the beat finds the claim over.
 */
export const END_IF_SILENT = `UPDATE claims SET ended_at = $3, ended_state = $4
  WHERE token = $1 AND ended_at IS NULL AND heartbeat_at < $2 RETURNING token`;

/**
 * What taking back a stale claim does to its request (pure): the result its worker recorded is
 * applied; else the request is requeued while attempts are left, or timed out on its last.
 */
export function takeBackChange(current: RequestRecord, stale: StaleClaim, now: number, defaultMaxAttempts: number): RequestRecord {
  const { token, result } = stale;
  if (result) {
    const reason = "result recorded: the worker finished but did not report";
    return result.outcome === "completed"
      ? applyChange(current, { to: "completed", fields: result.fields, reason, by: "monitor", note: { token } }, now)
      : applyChange(current, { to: "failed", fields: { error: result.error }, reason, by: "monitor", note: { token } }, now);
  }
  const why = `no heartbeat for ${formatDuration(now - Number(stale.heartbeat_at))} from ${stale.worker} on ${stale.host}`;
  const attempt = current.attempt ?? 1;
  const maxAttempts = current.maxAttempts ?? defaultMaxAttempts;
  return attempt < maxAttempts
    ? applyChange(current, { to: "queued", reason: `released: ${why} (attempt ${attempt} of ${maxAttempts})`, by: "monitor", note: { token } }, now)
    : applyChange(current, { to: "timeout", reason: `${why}; no attempts left (${attempt} of ${maxAttempts})`, by: "monitor", note: { token } }, now);
}
