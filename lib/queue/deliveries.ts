import { formatDuration } from "../model/duration";
import type { RequestRecord } from "../model/requestFormat";
import { applyChange } from "../model/transition";
import { backoffDelay } from "./backoff";
import type { BackoffOptions, CompleteResult, Delivery, FailOptions } from "../types";

/**
 * What a completion or a failure does to a request, without I/O: the one fence against double
 * processing, shared by every store (the local one in deliver.ts, the shared one in lib/postgres/).
 */

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

function dropped(current: RequestRecord, token: string, what: string, by: string | undefined, now: number): Delivery {
  const reason = `late ${what} dropped: ${staleReason(current, token)}`;
  const request = applyChange(current, { reason, by, note: { token, dropped: true } }, now);
  return { outcome: "dropped", request, reason };
}

/** The completion of `current` under claim `token`: applied (current claim), a duplicate (same token again), or dropped. */
export function completion(current: RequestRecord, token: string, result: CompleteResult, by: string | undefined, now: number): Delivery {
  if (current.state === "processing" && current.claim?.token === token) {
    const { fields, ...named } = result;
    return { outcome: "applied", request: applyChange(current, { to: "completed", fields: { ...fields, ...named }, by, note: { token } }, now) };
  }
  if (current.state === "completed" && lastStepWithToken(current, token)?.to === "completed") return { outcome: "duplicate", request: current };
  return dropped(current, token, "completion", by, now);
}

export interface FailureSettings {
  maxAttempts: number;
  backoff: BackoffOptions;
  random: () => number;
}

/**
 * The failure of `current` under claim `token`: back to `queued` with back-off while attempts are
 * left and it is retryable, else `failed`; a duplicate or dropped as in `completion`. `recorded` is
 * the error as the store redacts it, to know the same failure reported twice.
 */
export function failure(
  current: RequestRecord,
  token: string,
  error: string,
  recorded: string,
  options: FailOptions,
  settings: FailureSettings,
  now: number,
): Delivery {
  const retryable = options.retryable ?? true;
  if (current.state === "processing" && current.claim?.token === token) {
    const attempt = current.attempt ?? 1;
    const maxAttempts = current.maxAttempts ?? settings.maxAttempts;
    if (retryable && attempt < maxAttempts) {
      const delay = backoffDelay(attempt, settings.backoff, settings.random);
      const reason = `retryable failure (attempt ${attempt} of ${maxAttempts}); next attempt in ${formatDuration(delay)}`;
      // The error belongs to this attempt: it goes into its step of the history, not onto the request.
      const request = applyChange(current, { to: "queued", reason, by: options.by, managed: { notBefore: now + delay }, note: { token, error } }, now);
      return { outcome: "applied", request, reason };
    }
    const reason = retryable ? `failed on attempt ${attempt} of ${maxAttempts}: no attempts left` : "non-retryable failure";
    return { outcome: "applied", request: applyChange(current, { to: "failed", fields: { error }, reason, by: options.by, note: { token } }, now), reason };
  }
  const own = lastStepWithToken(current, token);
  // The same failure reported twice under one claim: its step recorded the error (a release did not).
  const same = (text: string | undefined) => text === recorded || text === error;
  if (own?.from === "processing" && (same(own.error) || (own.fields?.includes("error") && same(current.error)))) {
    return { outcome: "duplicate", request: current };
  }
  return dropped(current, token, "failure", options.by, now);
}
