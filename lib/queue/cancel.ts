import type { TrackerContext } from "../store/context";
import type { RequestRecord } from "../model/requestFormat";
import { canTransition } from "../model/states";
import { changeEach, type Changed, type Skipped } from "./changeEach";
import { targetIds } from "./retry";

export interface CancelOptions {
  /** Report exactly what would change, and change nothing. */
  dryRun?: boolean;
  /** Who asked, for the history. Default "manual". */
  by?: string;
}

export interface CancelReport {
  dryRun: boolean;
  matched: number;
  /** Moved to `failed` (or, in a dry run, that would be). */
  cancelled: Changed[];
  skipped: Skipped[];
}

const CANCELLED = "cancelled";

/** Whether a person's cancel applies to this request, and why: the one rule for the dry run, the run and the buttons. */
export function cancelDecision(request: RequestRecord): { cancel: boolean; reason: string } {
  if (!canTransition(request.state, "failed")) return { cancel: false, reason: `it is ${request.state}: already finished` };
  if (request.state === "processing") {
    return { cancel: true, reason: request.claim ? "a worker holds it; the result it may still send will be dropped" : "no reqwatch worker holds it" };
  }
  return { cancel: true, reason: "before a worker takes it" };
}

/**
 * A person's cancel: a created, queued or processing request goes to `failed`, reason
 * `cancelled`, in one write. A claim held on a processing request ends with it, so the worker's
 * late result is dropped by the token fence (lib/queue/deliver.ts).
 */
export function cancel(ctx: TrackerContext, ids: readonly string[], options: CancelOptions = {}): CancelReport {
  const unique = targetIds(ctx, { ids: [...ids] });
  const { changed, skipped } = changeEach(
    ctx,
    unique,
    (current) => {
      const decision = cancelDecision(current);
      if (!decision.cancel) return { skip: decision.reason };
      const note = { manual: true, ...(current.claim && { token: current.claim.token }) };
      return { reason: decision.reason, change: { to: "failed", fields: { error: CANCELLED }, reason: CANCELLED, by: options.by ?? "manual", note } };
    },
    options.dryRun,
  );
  return { dryRun: !!options.dryRun, matched: unique.length, cancelled: changed, skipped };
}
