import { commitChange } from "../commitChange";
import type { TrackerContext } from "../context";
import { ReqwatchError, isReqwatchError } from "../errors";
import { assertRequestId } from "../ids";
import { listRequests } from "../index/queries/listRequests";
import { resolveListFilters, type ListFilters } from "../listFilters";
import { claimLiveness } from "../process/liveness";
import type { RequestRecord } from "../schema";
import type { State } from "../states";
import { applyChange } from "../transition";

export interface RetryTarget {
  /** These requests... */
  ids?: string[];
  /** ...or every request matching this filter (`limit` and `cursor` are ignored: all matches). */
  filter?: Omit<ListFilters, "limit" | "cursor">;
}

export interface RetryOptions {
  /** Report exactly what would change, and change nothing. */
  dryRun?: boolean;
  /** Who asked, for the history. Default "manual". */
  by?: string;
}

export interface RetryReport {
  dryRun: boolean;
  matched: number;
  /** Requested back to `queued` (or, in a dry run, that would be). */
  retried: { requestId: string; from: State; reason: string }[];
  skipped: { requestId: string; state: State | null; reason: string }[];
}

/** Whether a person's retry applies to this request, and why: the one rule for the dry run and the real run. */
export function retryDecision(request: RequestRecord): { retry: true; reason: string } | { retry: false; reason: string } {
  switch (request.state) {
    case "failed":
    case "timeout":
      return { retry: true, reason: `manual retry of a ${request.state} request` };
    case "processing": {
      const claim = request.claim;
      const liveness = claim ? claimLiveness(claim) : "gone";
      if (liveness === "gone") return { retry: true, reason: `manual retry: the worker${claim?.pid ? ` (pid ${claim.pid})` : ""} is gone` };
      return { retry: false, reason: liveness === "alive" ? `a live worker (pid ${claim!.pid}) holds it` : "its worker runs on another host; wait for the monitor" };
    }
    default:
      return { retry: false, reason: `it is ${request.state}: nothing to retry` };
  }
}

/** The ids a retry target names: the ids given, or every request matching the filter now. */
export function targetIds(ctx: TrackerContext, target: RetryTarget): string[] {
  if (target.ids && target.filter) throw new ReqwatchError("BAD_INPUT", "Retry takes ids or a filter, not both.");
  if (target.ids) {
    for (const id of target.ids) assertRequestId(id);
    return [...new Set(target.ids)];
  }
  if (!target.filter) throw new ReqwatchError("BAD_INPUT", "Retry needs ids or a filter.");
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = listRequests(ctx.db, resolveListFilters({ ...target.filter, limit: 1000, cursor }));
    ids.push(...page.items.map((item) => item.requestId));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

/**
 * A person's retry: `failed` and `timeout` requests, and `processing` ones whose worker is gone, go
 * back to `queued`, ready at once, marked manual in their history. A manual retry gives one more
 * attempt even when `maxAttempts` is used up.
 */
export function retry(ctx: TrackerContext, target: RetryTarget, options: RetryOptions = {}): RetryReport {
  const ids = targetIds(ctx, target);
  const report: RetryReport = { dryRun: !!options.dryRun, matched: ids.length, retried: [], skipped: [] };
  for (const id of ids) {
    try {
      retryOne(ctx, id, options, report);
    } catch (error) {
      // One unreadable file must not stop a bulk retry; it is reported and left as it is.
      if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
      report.skipped.push({ requestId: id, state: null, reason: `unreadable: ${String(error.details?.reason ?? error.message)}` });
    }
  }
  return report;
}

function retryOne(ctx: TrackerContext, id: string, options: RetryOptions, report: RetryReport): void {
  // Decided afresh each time the write path asks (it may ask again after a conflict); reported once.
  let outcome: { retried: RetryReport["retried"][number] } | { skipped: RetryReport["skipped"][number] } | null = null;
  commitChange(ctx, id, (current) => {
    if (!current) {
      outcome = { skipped: { requestId: id, state: null, reason: "it does not exist" } };
      return current;
    }
    const decision = retryDecision(current);
    if (!decision.retry) {
      outcome = { skipped: { requestId: id, state: current.state, reason: decision.reason } };
      return current;
    }
    outcome = { retried: { requestId: id, from: current.state, reason: decision.reason } };
    if (options.dryRun) return current;
    return applyChange(current, { to: "queued", reason: decision.reason, by: options.by ?? "manual", note: { manual: true, ...(current.claim && { token: current.claim.token }) } }, ctx.now());
  });
  const decided = outcome as { retried: RetryReport["retried"][number] } | { skipped: RetryReport["skipped"][number] } | null;
  if (decided && "retried" in decided) report.retried.push(decided.retried);
  else if (decided) report.skipped.push(decided.skipped);
}
