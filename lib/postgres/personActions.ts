import { ReqwatchError } from "../model/errors";
import type { RequestRecord } from "../model/requestFormat";
import { cancelDecision, type CancelOptions, type CancelReport } from "../queue/cancel";
import { checkRetryTarget, retryDecision, type RetryOptions, type RetryReport, type RetryTarget } from "../queue/retry";
import type { SharedOperator } from "./sharedTracker";

/**
 * Whether a person's retry applies on the shared store: the local rule, except for a claim a
 * worker holds. Liveness here is the heartbeat alone, so a held claim is the monitor's to take back.
 */
function sharedRetryDecision(request: RequestRecord): ReturnType<typeof retryDecision> {
  if (request.state === "processing" && request.claim) {
    return { retry: false, reason: `a worker (${request.claim.host ?? "another host"}) holds it; the monitor takes it back once its heartbeat stops` };
  }
  return retryDecision(request);
}

/** The ids a retry or cancel names on the shared store: the ids given, or every request matching the filter now. */
async function targetIds(operator: SharedOperator, target: RetryTarget): Promise<string[]> {
  checkRetryTarget(target);
  if (target.ids) return [...new Set(target.ids)];
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await operator.list({ ...target.filter, limit: 1000, cursor });
    ids.push(...page.items.map((item) => item.requestId));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

/** A person's retry on the shared store: as lib/queue/retry.ts, each request in a transaction of its own. */
export async function retryShared(operator: SharedOperator, target: RetryTarget, options: RetryOptions = {}): Promise<RetryReport> {
  const ids = await targetIds(operator, target);
  const { changed, skipped } = await operator.changeEach(
    ids,
    (current) => {
      const decision = sharedRetryDecision(current);
      if (!decision.retry) return { skip: decision.reason };
      const note = { manual: true, ...(current.claim && { token: current.claim.token }) };
      return { reason: decision.reason, change: { to: "queued", reason: decision.reason, by: options.by ?? "manual", note } };
    },
    !!options.dryRun,
  );
  return { dryRun: !!options.dryRun, matched: ids.length, retried: changed, skipped };
}

/** A person's cancel on the shared store: as lib/queue/cancel.ts; a claim held ends with it, so the worker's late result is dropped. */
export async function cancelShared(operator: SharedOperator, ids: readonly string[], options: CancelOptions = {}): Promise<CancelReport> {
  if (ids.length === 0) throw new ReqwatchError("BAD_INPUT", "A cancel needs ids.");
  const unique = await targetIds(operator, { ids: [...ids] });
  const { changed, skipped } = await operator.changeEach(
    unique,
    (current) => {
      const decision = cancelDecision(current);
      if (!decision.cancel) return { skip: decision.reason };
      const note = { manual: true, ...(current.claim && { token: current.claim.token }) };
      return { reason: decision.reason, change: { to: "failed", fields: { error: "cancelled" }, reason: "cancelled", by: options.by ?? "manual", note } };
    },
    !!options.dryRun,
  );
  return { dryRun: !!options.dryRun, matched: unique.length, cancelled: changed, skipped };
}
