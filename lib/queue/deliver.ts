import { commitChange } from "../store/commitChange";
import type { TrackerContext } from "../store/context";
import { ReqwatchError } from "../model/errors";
import { assertRequestId } from "../model/ids";
import { renewHeartbeat } from "../db/claims";
import type { RequestRecord } from "../model/requestFormat";
import { completion, failure } from "./deliveries";
import { removeResultMarker } from "../stateFiles/resultMarker";
import { redactField } from "../model/redaction";
import { assertManaged } from "../store/ownership";
import type { Delivery, CompleteResult, FailOptions } from "../types";

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
    delivery = completion(mustExist(requestId, found), token, result, by, ctx.now());
    return delivery.request;
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
  // The error as it was recorded, to know the same failure reported twice.
  const recorded = redactField(ctx.options.redaction, "error", error);
  let delivery!: Delivery;
  const written = commitChange(ctx, requestId, (found) => {
    delivery = failure(mustExist(requestId, found), token, error, recorded, options, ctx.options, ctx.now());
    return delivery.request;
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
