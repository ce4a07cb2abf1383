import { commitChange } from "../store/commitChange";
import { pausedWorkspaces } from "../files/pauseFile";
import type { TrackerContext } from "../store/context";
import { formatDuration } from "../model/duration";
import { isReqwatchError } from "../model/errors";
import { lastClaimAt, lateRequests, type LateRequest as Candidate } from "../db/queries/stuckRows";
import { claimLiveness, type Liveness } from "../process/liveness";
import { readResultMarker, removeResultMarker } from "../files/resultMarker";
import type { RequestRecord } from "../model/requestFormat";
import type { State } from "../model/states";
import { applyChange } from "../model/transition";

/** A request the dashboard shows as stuck, with the reason in words. */
export interface StuckRequest {
  requestId: string;
  workspace: string;
  state: State;
  /** When it entered its state. */
  since: number;
  reason: string;
}

export interface MonitorCounts {
  /** `queued` longer than the threshold: flagged, nothing else. */
  stuckQueued: number;
  /**
   * `processing` with no reqwatch claim (another program, or a hand-made change, moved it there)
   * past the hung threshold or its deadline; or any stuck request in a folder reqwatch only
   * observes: flagged, never changed.
   */
  stuckNotOwned: number;
  /** `processing` past `timeoutAt`: moved to `timeout`. */
  deadlineTimedOut: number;
  /** No heartbeat, but a result marker was there: the result was applied. */
  resultsApplied: number;
  /** No heartbeat, but the worker process is alive: flagged, left alone. */
  stuckAlive: number;
  /** No heartbeat and the worker is gone: back to `queued`. */
  released: number;
  /** No heartbeat, the worker is gone and no attempts are left: `timeout`. */
  timedOut: number;
}

export interface MonitorPass {
  at: number;
  durationMs: number;
  counts: MonitorCounts;
  /** What is stuck after this pass's actions: the dashboard's stuck badge counts these. */
  stuck: StuckRequest[];
}

function findCandidates(ctx: TrackerContext, now: number): Candidate[] {
  return lateRequests(ctx.db, {
    now,
    queuedCutoff: now - ctx.options.queuedStuckAfterMs,
    heartbeatCutoff: now - ctx.options.heartbeatTimeoutMs,
    hungCutoff: now - ctx.options.hungAfterMs,
    // A paused queue's wait is what its pause is for, not a stuck request (the header says it is paused).
    paused: pausedWorkspaces(ctx.dir),
  });
}

function workerName(candidate: Pick<Candidate, "claim_pid" | "claim_host">): string {
  return candidate.claim_pid ? `worker ${candidate.claim_pid}` : "the worker";
}

/** A claim that names no pid cannot be proven gone: only its heartbeat tells. */
function livenessOf(candidate: Candidate): Liveness {
  if (candidate.claim_pid === null) return "unknown";
  return claimLiveness({ pid: candidate.claim_pid, host: candidate.claim_host ?? undefined, processStartedAt: candidate.claim_process_started_at });
}

function silentFor(candidate: Candidate, now: number): string {
  return formatDuration(now - (candidate.heartbeat_at ?? candidate.state_since));
}

/**
 * What a pass learns once and uses for every queued candidate: each workspace's latest claim, and
 * how many of its queued requests came before. Every queued request older than this one is older
 * than the threshold too, so it is a candidate: counting the candidates in order is its place.
 */
class QueueContext {
  readonly lastClaims = new Map<string, number | null>();
  private readonly seen = new Map<string, number>();
  ahead = 0;

  /** Called for each queued candidate, oldest first. */
  next(workspace: string): void {
    this.ahead = this.seen.get(workspace) ?? 0;
    this.seen.set(workspace, this.ahead + 1);
  }
}

/** A queued request's wait, and what is known of the workers that would claim it. */
function queuedReason(ctx: TrackerContext, candidate: Candidate, now: number, context: QueueContext): string {
  const lastClaims = context.lastClaims;
  const base = `queued ${formatDuration(now - candidate.state_since)}`;
  if (candidate.not_before !== null && candidate.not_before > now) return `${base}; waiting for its back-off until ${new Date(candidate.not_before).toISOString()}`;
  let last = lastClaims.get(candidate.workspace);
  if (last === undefined) {
    last = lastClaimAt(ctx.db, candidate.workspace);
    lastClaims.set(candidate.workspace, last);
  }
  const threshold = formatDuration(ctx.options.queuedStuckAfterMs);
  if (last === null) return `${base}; no reqwatch worker has claimed from workspace ${candidate.workspace} in ${threshold} (last claim: never)`;
  const ago = now - last;
  if (ago >= ctx.options.queuedStuckAfterMs) {
    return `${base}; no reqwatch worker has claimed from workspace ${candidate.workspace} in ${threshold} (last claim ${formatDuration(ago)} ago)`;
  }
  return `${base}; workers are claiming from workspace ${candidate.workspace} (last claim ${formatDuration(ago)} ago), ${context.ahead} queued ahead of it`;
}

/** Why no reqwatch worker holds a processing request that carries no claim. */
function notClaimed(candidate: Candidate): string {
  return candidate.version === 0 ? "no reqwatch worker holds it (written by another program)" : "no reqwatch worker holds it (moved to processing without a claim)";
}

/** A processing candidate as the dashboard shows it: what is known of its worker, and what is not. */
function processingReason(candidate: Candidate, now: number, liveness: Liveness | null, managed: boolean): string {
  const base = `processing ${formatDuration(now - candidate.state_since)}`;
  const deadline = candidate.timeout_at !== null && candidate.timeout_at < now ? `, past its deadline (${new Date(candidate.timeout_at).toISOString()})` : "";
  if (candidate.claim_token === null) return `${base}${deadline}; ${notClaimed(candidate)}`;
  const who =
    liveness === "gone"
      ? `${workerName(candidate)} gone`
      : liveness === "alive"
        ? `${workerName(candidate)} alive, silent ${silentFor(candidate, now)}`
        : `no heartbeat for ${silentFor(candidate, now)}`;
  return `${base}${deadline}, ${who}${managed ? "" : " (the folder is observed read-only: left as it is)"}`;
}

/** A candidate as the dashboard shows it, with the reason in words. */
function stuckEntry(ctx: TrackerContext, candidate: Candidate, now: number, liveness: Liveness | null, queue: QueueContext): StuckRequest {
  const base = { requestId: candidate.id, workspace: candidate.workspace, state: candidate.state, since: candidate.state_since };
  if (candidate.state === "queued") {
    queue.next(candidate.workspace);
    return { ...base, reason: queuedReason(ctx, candidate, now, queue) };
  }
  return { ...base, reason: processingReason(candidate, now, liveness, ctx.ownership.access === "managed") };
}

/** Whether a pass may act on this candidate: reqwatch's own queue owns it (a reqwatch claim, in a folder reqwatch manages). */
function owned(ctx: TrackerContext, candidate: Candidate): boolean {
  return candidate.state === "processing" && candidate.claim_token !== null && ctx.ownership.access === "managed";
}

/** What is stuck right now, without acting: the same rules as a pass, read-only. */
export function findStuck(ctx: TrackerContext): StuckRequest[] {
  const now = ctx.now();
  const queue = new QueueContext();
  const stuck: StuckRequest[] = [];
  for (const candidate of findCandidates(ctx, now)) {
    const liveness = candidate.state === "processing" && candidate.claim_token !== null ? livenessOf(candidate) : null;
    if (!silenceVisible(ctx, liveness)) continue;
    stuck.push(stuckEntry(ctx, candidate, now, liveness, queue));
  }
  return stuck;
}

/**
 * An observer reads the files, not the owner's index, where heartbeats live: a live worker's
 * silence there is not silence. Its request is not flagged; a gone worker's is.
 */
function silenceVisible(ctx: TrackerContext, liveness: Liveness | null): boolean {
  return !(liveness === "alive" && ctx.ownership.access === "observed");
}

/**
 * One pass of the stuck monitor: one index query, then for each candidate either a flag or an
 * action. It acts only on what reqwatch's own queue owns: a `processing` request under a reqwatch
 * claim, in a folder reqwatch manages. In order for a silent one: a result marker is
 * applied; a live worker is left alone and flagged; a gone worker's request is released, or timed
 * out when no attempts are left. Each action goes through the write path, which re-checks the
 * request under the lock, with its reason in the history. Anything else late is flagged with what
 * is known and what is not, and never changed.
 */
export function monitorPass(ctx: TrackerContext): MonitorPass {
  const started = performance.now();
  const now = ctx.now();
  const counts: MonitorCounts = { stuckQueued: 0, stuckNotOwned: 0, deadlineTimedOut: 0, resultsApplied: 0, stuckAlive: 0, released: 0, timedOut: 0 };
  const stuck: StuckRequest[] = [];
  const queue = new QueueContext();

  for (const candidate of findCandidates(ctx, now)) {
    if (candidate.state === "queued") {
      counts.stuckQueued++;
      stuck.push(stuckEntry(ctx, candidate, now, null, queue));
      continue;
    }
    if (!owned(ctx, candidate)) {
      const liveness = candidate.claim_token === null ? null : livenessOf(candidate);
      if (!silenceVisible(ctx, liveness)) continue;
      counts.stuckNotOwned++;
      stuck.push(stuckEntry(ctx, candidate, now, liveness, queue));
      continue;
    }
    try {
      const action = actOnProcessing(ctx, candidate, now);
      if (action.count) counts[action.count]++;
      if (action.stuck) stuck.push(stuckEntry(ctx, candidate, now, "alive", queue));
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
function actOnProcessing(ctx: TrackerContext, candidate: Candidate, now: number): Action {
  const token = candidate.claim_token!;
  // Every action re-checks under the lock that the request is still processing under the same claim.
  const underSameClaim = (current: RequestRecord | null): current is RequestRecord =>
    !!current && current.state === "processing" && (current.claim?.token ?? null) === token;

  let acted = false;
  if (candidate.timeout_at !== null && candidate.timeout_at < now) {
    commitChange(ctx, candidate.id, (current) => {
      acted = underSameClaim(current);
      if (!underSameClaim(current)) return current;
      return applyChange(current, { to: "timeout", reason: `past its deadline (${new Date(candidate.timeout_at!).toISOString()})`, by: "monitor", note: { token } }, now);
    });
    return acted ? { count: "deadlineTimedOut" } : {};
  }

  const marker = readResultMarker(ctx.dir, candidate.id);
  if (marker && marker.token === token) {
    const reason = "result marker found: the worker finished but did not report";
    commitChange(ctx, candidate.id, (current) => {
      acted = underSameClaim(current);
      if (!underSameClaim(current)) return current;
      return marker.outcome === "completed"
        ? applyChange(current, { to: "completed", fields: marker.fields, reason, by: "monitor", note: { token } }, now)
        : applyChange(current, { to: "failed", fields: { error: marker.error ?? "failed" }, reason, by: "monitor", note: { token } }, now);
    });
    removeResultMarker(ctx.dir, candidate.id);
    return acted ? { count: "resultsApplied" } : {};
  }

  const liveness = livenessOf(candidate);
  if (liveness === "alive") {
    return { count: "stuckAlive", stuck: true };
  }

  const why = liveness === "gone" ? `the worker's pid ${candidate.claim_pid ?? "?"} is gone` : `no heartbeat for ${silentFor(candidate, now)} from a worker on ${candidate.claim_host ?? "an unknown host"}`;
  let count: keyof MonitorCounts | undefined;
  commitChange(ctx, candidate.id, (current) => {
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
