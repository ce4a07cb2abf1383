import { commitChange } from "../store/commitChange";
import { pausedWorkspaces } from "../stateFiles/pauseFile";
import type { TrackerContext } from "../store/context";
import { formatDuration } from "../model/duration";
import { isReqwatchError } from "../model/errors";
import { lastClaimAt, stuckRows, type StuckRow } from "../db/queries/stuckRows";
import { claimLiveness, type Liveness } from "../process/liveness";
import { readResultMarker, removeResultMarker } from "../stateFiles/resultMarker";
import type { RequestRecord } from "../model/requestFormat";
import type { StuckCause } from "../model/stuckCauses";
import { applyChange } from "../model/transition";
import type { StuckRequest, MonitorCounts, MonitorPass } from "../types";

function stuckRowsAt(ctx: TrackerContext, now: number): StuckRow[] {
  return stuckRows(ctx.db, {
    now,
    queuedCutoff: now - ctx.options.queuedStuckAfterMs,
    heartbeatCutoff: now - ctx.options.heartbeatTimeoutMs,
    unclaimedCutoff: now - ctx.options.processingStuckAfterMs,
    // A paused queue's wait is what its pause is for, not a stuck request (the header says it is paused).
    paused: pausedWorkspaces(ctx.dir),
  });
}

function workerName(row: Pick<StuckRow, "claim_pid" | "claim_host">): string {
  return row.claim_pid ? `worker ${row.claim_pid}` : "the worker";
}

/** A claim that names no pid cannot be proven gone: only its heartbeat tells. */
function livenessOf(row: StuckRow): Liveness {
  if (row.claim_pid === null) return "unknown";
  return claimLiveness({ pid: row.claim_pid, host: row.claim_host ?? undefined, processStartedAt: row.claim_process_started_at });
}

function noHeartbeatFor(row: StuckRow, now: number): string {
  return formatDuration(now - (row.heartbeat_at ?? row.state_since));
}

/**
 * What a pass learns once and uses for every queued row: each workspace's latest claim, and
 * how many of its queued requests came before. Every queued request older than this one is older
 * than the threshold too, so it is stuck too: counting the stuck rows in order is its place.
 */
class QueueContext {
  readonly lastClaims = new Map<string, number | null>();
  readonly #seen = new Map<string, number>();
  ahead = 0;

  /** Called for each queued row, oldest first. */
  next(workspace: string): void {
    this.ahead = this.#seen.get(workspace) ?? 0;
    this.#seen.set(workspace, this.ahead + 1);
  }
}

/** A queued request's wait, and what is known of the workers that would claim it. */
function queuedReason(ctx: TrackerContext, row: StuckRow, now: number, context: QueueContext): string {
  const lastClaims = context.lastClaims;
  const base = `queued ${formatDuration(now - row.state_since)}`;
  if (row.not_before !== null && row.not_before > now) return `${base}; waiting for its back-off until ${new Date(row.not_before).toISOString()}`;
  let last = lastClaims.get(row.workspace);
  if (last === undefined) {
    last = lastClaimAt(ctx.db, row.workspace);
    lastClaims.set(row.workspace, last);
  }
  const threshold = formatDuration(ctx.options.queuedStuckAfterMs);
  if (last === null) return `${base}; no reqwatch worker has claimed from workspace ${row.workspace} in ${threshold} (last claim: never)`;
  const ago = now - last;
  if (ago >= ctx.options.queuedStuckAfterMs) {
    return `${base}; no reqwatch worker has claimed from workspace ${row.workspace} in ${threshold} (last claim ${formatDuration(ago)} ago)`;
  }
  return `${base}; workers are claiming from workspace ${row.workspace} (last claim ${formatDuration(ago)} ago), ${context.ahead} queued ahead of it`;
}

/** Why no reqwatch worker holds a processing request that carries no claim. */
function notClaimed(row: StuckRow): string {
  return row.version === 0 ? "no reqwatch worker holds it (written by another program)" : "no reqwatch worker holds it (moved to processing without a claim)";
}

/** A processing row as the dashboard shows it: what is known of its worker, and what is not. */
function processingReason(row: StuckRow, now: number, liveness: Liveness | null, managed: boolean): string {
  const base = `processing ${formatDuration(now - row.state_since)}`;
  const deadline = row.timeout_at !== null && row.timeout_at < now ? `, past its deadline (${new Date(row.timeout_at).toISOString()})` : "";
  if (row.claim_token === null) return `${base}${deadline}; ${notClaimed(row)}`;
  const who =
    liveness === "gone"
      ? `${workerName(row)} gone`
      : liveness === "alive"
        ? `${workerName(row)} alive, no heartbeat for ${noHeartbeatFor(row, now)}`
        : `no heartbeat for ${noHeartbeatFor(row, now)}`;
  return `${base}${deadline}, ${who}${managed ? "" : " (the folder is observed read-only: left as it is)"}`;
}

/** The rule a stuck row is past, in the order `stuckRows` tells them apart: a deadline first, then whose heartbeat. */
function causeOf(row: StuckRow, now: number): StuckCause {
  if (row.state === "queued") return "waited too long";
  if (row.timeout_at !== null && row.timeout_at < now) return "past its deadline";
  return row.claim_token === null ? "no worker holds it" : "no heartbeat";
}

/** A row as the dashboard shows it, with its cause and the reason in words. */
function stuckEntry(ctx: TrackerContext, row: StuckRow, now: number, liveness: Liveness | null, queue: QueueContext): StuckRequest {
  const base = { requestId: row.id, workspace: row.workspace, state: row.state, since: row.state_since, cause: causeOf(row, now) };
  if (row.state === "queued") {
    queue.next(row.workspace);
    return { ...base, reason: queuedReason(ctx, row, now, queue) };
  }
  return { ...base, reason: processingReason(row, now, liveness, ctx.ownership.access === "managed") };
}

/** Whether a pass may act on this row: reqwatch's own queue owns it (a reqwatch claim, in a folder reqwatch manages). */
function owned(ctx: TrackerContext, row: StuckRow): boolean {
  return row.state === "processing" && row.claim_token !== null && ctx.ownership.access === "managed";
}

/** What is stuck right now, without acting: the same rules as a pass, read-only. */
export function findStuck(ctx: TrackerContext): StuckRequest[] {
  const now = ctx.now();
  const queue = new QueueContext();
  const stuck: StuckRequest[] = [];
  for (const row of stuckRowsAt(ctx, now)) {
    const liveness = row.state === "processing" && row.claim_token !== null ? livenessOf(row) : null;
    if (!missingHeartbeatVisible(ctx, liveness)) continue;
    stuck.push(stuckEntry(ctx, row, now, liveness, queue));
  }
  return stuck;
}

/**
 * An observer reads the files, not the owner's index, where heartbeats live: a live worker's
 * missing heartbeat there says nothing. Its request is not flagged; a gone worker's is.
 */
function missingHeartbeatVisible(ctx: TrackerContext, liveness: Liveness | null): boolean {
  return !(liveness === "alive" && ctx.ownership.access === "observed");
}

/**
 * One pass of the stuck monitor: one index query, then for each row either a flag or an
 * action. It acts only on what reqwatch's own queue owns: a `processing` request under a reqwatch
 * claim, in a folder reqwatch manages. In order for one without a heartbeat: a result marker is
 * applied; a live worker is left alone and flagged; a gone worker's request is released, or timed
 * out when no attempts are left. Each action goes through the write path, which re-checks the
 * request under the lock, with its reason in the history. Anything else stuck is flagged with what
 * is known and what is not, and never changed.
 */
export function monitorPass(ctx: TrackerContext): MonitorPass {
  const started = performance.now();
  const now = ctx.now();
  const counts: MonitorCounts = { stuckQueued: 0, stuckNotOwned: 0, deadlineTimedOut: 0, resultsApplied: 0, stuckAlive: 0, released: 0, timedOut: 0 };
  const stuck: StuckRequest[] = [];
  const queue = new QueueContext();

  for (const row of stuckRowsAt(ctx, now)) {
    if (row.state === "queued") {
      counts.stuckQueued++;
      stuck.push(stuckEntry(ctx, row, now, null, queue));
      continue;
    }
    if (!owned(ctx, row)) {
      const liveness = row.claim_token === null ? null : livenessOf(row);
      if (!missingHeartbeatVisible(ctx, liveness)) continue;
      counts.stuckNotOwned++;
      stuck.push(stuckEntry(ctx, row, now, liveness, queue));
      continue;
    }
    try {
      const action = actOnProcessing(ctx, row, now);
      if (action.count) counts[action.count]++;
      if (action.stuck) stuck.push(stuckEntry(ctx, row, now, "alive", queue));
    } catch (error) {
      // An unreadable file is reconciliation's to report; the pass goes on with the others.
      if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
    }
  }
  return { at: now, durationMs: Math.round((performance.now() - started) * 100) / 100, counts, stuck };
}

/** What a pass did to one request; no count when the request had moved on by the time the lock was held. */
type Action = { count?: keyof MonitorCounts; stuck?: boolean };

/** Act on a processing request under a reqwatch claim (`owned`). */
function actOnProcessing(ctx: TrackerContext, row: StuckRow, now: number): Action {
  const token = row.claim_token!;
  // Every action re-checks under the lock that the request is still processing under the same claim.
  const underSameClaim = (current: RequestRecord | null): current is RequestRecord =>
    !!current && current.state === "processing" && (current.claim?.token ?? null) === token;

  let acted = false;
  if (row.timeout_at !== null && row.timeout_at < now) {
    commitChange(ctx, row.id, (current) => {
      acted = underSameClaim(current);
      if (!underSameClaim(current)) return current;
      return applyChange(
        current,
        { to: "timeout", reason: `past its deadline (${new Date(row.timeout_at!).toISOString()})`, by: "monitor", note: { token } },
        now,
      );
    });
    return acted ? { count: "deadlineTimedOut" } : {};
  }

  const marker = readResultMarker(ctx.dir, row.id);
  if (marker && marker.token === token) {
    const reason = "result marker found: the worker finished but did not report";
    commitChange(ctx, row.id, (current) => {
      acted = underSameClaim(current);
      if (!underSameClaim(current)) return current;
      return marker.outcome === "completed"
        ? applyChange(current, { to: "completed", fields: marker.fields, reason, by: "monitor", note: { token } }, now)
        : applyChange(current, { to: "failed", fields: { error: marker.error ?? "failed" }, reason, by: "monitor", note: { token } }, now);
    });
    removeResultMarker(ctx.dir, row.id);
    return acted ? { count: "resultsApplied" } : {};
  }

  const liveness = livenessOf(row);
  if (liveness === "alive") {
    return { count: "stuckAlive", stuck: true };
  }

  const why =
    liveness === "gone"
      ? `the worker's pid ${row.claim_pid ?? "?"} is gone`
      : `no heartbeat for ${noHeartbeatFor(row, now)} from a worker on ${row.claim_host ?? "an unknown host"}`;
  let count: keyof MonitorCounts | undefined;
  commitChange(ctx, row.id, (current) => {
    count = undefined;
    if (!underSameClaim(current)) return current;
    const attempt = current.attempt ?? 1;
    const maxAttempts = current.maxAttempts ?? ctx.options.maxAttempts;
    if (attempt < maxAttempts) {
      count = "released";
      return applyChange(current, { to: "queued", reason: `released: ${why} (attempt ${attempt} of ${maxAttempts})`, by: "monitor", note: { token } }, now);
    }
    count = "timedOut";
    return applyChange(current, { to: "timeout", reason: `${why}; no attempts left (${attempt} of ${maxAttempts})`, by: "monitor", note: { token } }, now);
  });
  return { count };
}
