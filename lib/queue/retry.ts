import type { TrackerContext } from "../store/context";
import { ReqwatchError } from "../model/errors";
import { assertRequestId } from "../model/ids";
import { listRequests } from "../db/queries/listRequests";
import { resolveListFilters, type ListFilters } from "../model/listFilters";
import { claimLiveness } from "../process/liveness";
import type { RequestRecord } from "../model/requestFormat";
import { changeEach, type Changed, type Skipped } from "./changeEach";

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
  retried: Changed[];
  skipped: Skipped[];
}

/** Whether a person's retry applies to this request, and why: the one rule for the dry run and the real run. */
export function retryDecision(request: RequestRecord): { retry: true; reason: string } | { retry: false; reason: string } {
  switch (request.state) {
    case "failed":
    case "timeout":
      return { retry: true, reason: `manual retry of a ${request.state} request` };
    case "processing": {
      const claim = request.claim;
      if (!claim) return { retry: true, reason: "manual retry: no reqwatch worker holds it; it goes back to the queue for one to claim" };
      const liveness = claimLiveness(claim);
      if (liveness === "gone") return { retry: true, reason: `manual retry: the worker${claim.pid ? ` (pid ${claim.pid})` : ""} is gone` };
      return {
        retry: false,
        reason:
          liveness === "alive"
            ? `a live worker (pid ${claim!.pid}) holds it`
            : "its worker cannot be checked from here (another host, or no pid); wait for the monitor to release it",
      };
    }
    default:
      return { retry: false, reason: `it is ${request.state}: nothing to retry` };
  }
}

/** The one rule of a retry's target, wherever it is asked for (CLI, MCP, dashboard, library): ids or a filter, not both. */
export function checkRetryTarget(target: RetryTarget): void {
  if (target.ids && target.filter) throw new ReqwatchError("BAD_INPUT", "A retry takes ids or a filter, not both.");
  if (!target.ids && !target.filter) throw new ReqwatchError("BAD_INPUT", "A retry needs ids or a filter.");
}

/** The ids a retry target names: the ids given, or every request matching the filter now. */
export function targetIds(ctx: TrackerContext, target: RetryTarget): string[] {
  checkRetryTarget(target);
  if (target.ids) {
    for (const id of target.ids) assertRequestId(id);
    return [...new Set(target.ids)];
  }
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
  const { changed, skipped } = changeEach(
    ctx,
    ids,
    (current) => {
      const decision = retryDecision(current);
      if (!decision.retry) return { skip: decision.reason };
      return {
        reason: decision.reason,
        change: {
          to: "queued",
          reason: decision.reason,
          by: options.by ?? "manual",
          note: { manual: true, ...(current.claim && { token: current.claim.token }) },
        },
      };
    },
    options.dryRun,
  );
  return { dryRun: !!options.dryRun, matched: ids.length, retried: changed, skipped };
}
