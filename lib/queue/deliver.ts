import { commitChange } from "../store/commitChange";
import type { TrackerContext } from "../store/context";
import { formatDuration } from "../model/duration";
import { ReqwatchError } from "../model/errors";
import { assertRequestId } from "../model/ids";
import { renewHeartbeat } from "../db/claims";
import type { RequestRecord } from "../model/requestFormat";
import { applyChange } from "../model/transition";
import { backoffDelay } from "./backoff";
import { removeResultMarker } from "../stateFiles/resultMarker";
import { redactField } from "../model/redaction";
import { assertManaged } from "../store/ownership";
import type { Delivery, CompleteResult, FailOptions } from "../types";

function lastStepWithToken(request: RequestRecord, token: string) {
  return [...(request.transitions ?? [])].reverse().find((entry) => entry.token === token && !entry.dropped);
}

/** Why a token is not the current claim's, in words for the history. */
function staleReason(request: RequestRecord, token: string): string {
  if (request.state === "processing") return "the request was claimed again by another worker";
  const own = lastStepWithToken(request, token);
  if (request.state === "timeout") return "the request timed out";
  if (request.state === "queued") return own ? "the claim was released and the request requeued" : "the request was requeued";
  return `the request is already ${request.state}`;
}

function dropped(ctx: TrackerContext, current: RequestRecord, token: string, what: string, by: string | undefined) {
  const reason = `late ${what} dropped: ${staleReason(current, token)}`;
  const request = applyChange(current, { reason, by, note: { token, dropped: true } }, ctx.now());
  return { request, reason };
}

function mustExist(requestId: string, current: RequestRecord | null): RequestRecord {
  if (!current) throw new ReqwatchError("NOT_FOUND", `Request ${requestId} does not exist.`);
  return current;
}

/**
 * Complete a request under claim `token`. Only the current claim's token completes it; the same
 * token again is a duplicate (nothing changes); any other token is a late delivery, recorded in the
 * history as dropped and otherwise ignored. This is the fence against double processing.
 */
export function complete(ctx: TrackerContext, requestId: string, token: string, result: CompleteResult = {}, by?: string): Delivery {
  // Even a duplicate, which writes no request, removes the result marker.
  assertManaged(ctx, "Completing");
  assertRequestId(requestId);
  let delivery!: Delivery;
  const written = commitChange(ctx, requestId, (found) => {
    const current = mustExist(requestId, found);
    if (current.state === "processing" && current.claim?.token === token) {
      const { fields, ...named } = result;
      const request = applyChange(current, { to: "completed", fields: { ...fields, ...named }, by, note: { token } }, ctx.now());
      delivery = { outcome: "applied", request };
      return request;
    }
    if (current.state === "completed" && lastStepWithToken(current, token)?.to === "completed") {
      delivery = { outcome: "duplicate", request: current };
      return current;
    }
    const { request, reason } = dropped(ctx, current, token, "completion", by);
    delivery = { outcome: "dropped", request, reason };
    return request;
  });
  // The request as written: its output's secrets redacted.
  if (written) delivery.request = written;
  // The marker has served its purpose once the result is recorded.
  if (delivery.outcome !== "dropped") removeResultMarker(ctx.dir, requestId);
  return delivery;
}

/**
 * Report a failure under claim `token`. A retryable failure with attempts left goes back to
 * `queued` with back-off; otherwise the request is `failed`. The attempt count and the state change
 * in one write. Stale tokens are dropped as in `complete`.
 */
export function fail(ctx: TrackerContext, requestId: string, token: string, error: string, options: FailOptions = {}): Delivery {
  assertManaged(ctx, "Failing");
  assertRequestId(requestId);
  const retryable = options.retryable ?? true;
  // The error as it was recorded, to know the same failure reported twice.
  const recorded = redactField(ctx.options.redaction, "error", error);
  let delivery!: Delivery;
  const written = commitChange(ctx, requestId, (found) => {
    const current = mustExist(requestId, found);
    if (current.state === "processing" && current.claim?.token === token) {
      const now = ctx.now();
      const attempt = current.attempt ?? 1;
      const maxAttempts = current.maxAttempts ?? ctx.options.maxAttempts;
      if (retryable && attempt < maxAttempts) {
        const delay = backoffDelay(attempt, ctx.options.backoff, ctx.options.random);
        const reason = `retryable failure (attempt ${attempt} of ${maxAttempts}); next attempt in ${formatDuration(delay)}`;
        // The error belongs to this attempt: it goes into its step of the history, not onto the request.
        const request = applyChange(current, { to: "queued", reason, by: options.by, managed: { notBefore: now + delay }, note: { token, error } }, now);
        delivery = { outcome: "applied", request, reason };
        return request;
      }
      const reason = retryable ? `failed on attempt ${attempt} of ${maxAttempts}: no attempts left` : "non-retryable failure";
      const request = applyChange(current, { to: "failed", fields: { error }, reason, by: options.by, note: { token } }, now);
      delivery = { outcome: "applied", request, reason };
      return request;
    }
    const own = lastStepWithToken(current, token);
    // The same failure reported twice under one claim: its step recorded the error (a release did not).
    const same = (text: string | undefined) => text === recorded || text === error;
    if (own?.from === "processing" && (same(own.error) || (own.fields?.includes("error") && same(current.error)))) {
      delivery = { outcome: "duplicate", request: current };
      return current;
    }
    const { request, reason } = dropped(ctx, current, token, "failure", options.by);
    delivery = { outcome: "dropped", request, reason };
    return request;
  });
  if (written) delivery.request = written;
  // The marker has served its purpose once the result is recorded.
  if (delivery.outcome !== "dropped") removeResultMarker(ctx.dir, requestId);
  return delivery;
}

/**
 * Renew a claim's heartbeat. Heartbeats are liveness, not history: they update the index only, so a
 * worker can beat every few seconds without a durable write or a history entry per beat. False
 * when `token` is not the current claim (the worker should stop: its result will be dropped).
 */
export function heartbeat(ctx: TrackerContext, requestId: string, token: string): boolean {
  assertManaged(ctx, "A heartbeat");
  assertRequestId(requestId);
  return renewHeartbeat(ctx, requestId, token, ctx.now());
}
