import { commitChange } from "../store/commitChange";
import type { TrackerContext } from "../store/context";
import { isReqwatchError } from "../model/errors";
import type { RequestRecord } from "../model/requestFormat";
import type { State } from "../model/states";
import { applyChange, type InternalChange } from "../model/transition";

export interface Changed {
  requestId: string;
  from: State;
  reason: string;
}

export interface Skipped {
  requestId: string;
  state: State | null;
  reason: string;
}

/** What a person's action does to one request: skip it (and why), or this change. */
export type Decision = { skip: string } | { reason: string; change: InternalChange };

/**
 * A person's action over requests, one write each: `decide` says, for the request as the write path
 * reads it (again after a conflict), whether to skip it or what to change. A dry run decides the
 * same way and writes nothing. An unreadable file is skipped and reported, never stops the rest.
 */
export function changeEach(
  ctx: TrackerContext,
  ids: readonly string[],
  decide: (current: RequestRecord) => Decision,
  dryRun = false,
): { changed: Changed[]; skipped: Skipped[] } {
  const changed: Changed[] = [];
  const skipped: Skipped[] = [];
  for (const id of ids) {
    // Decided afresh each time the write path asks; reported once.
    let outcome: { changed: Changed } | { skipped: Skipped } | null = null;
    try {
      commitChange(ctx, id, (current) => {
        if (!current) {
          outcome = { skipped: { requestId: id, state: null, reason: "it does not exist" } };
          return current;
        }
        const decision = decide(current);
        if ("skip" in decision) {
          outcome = { skipped: { requestId: id, state: current.state, reason: decision.skip } };
          return current;
        }
        outcome = { changed: { requestId: id, from: current.state, reason: decision.reason } };
        return dryRun ? current : applyChange(current, decision.change, ctx.now());
      });
    } catch (error) {
      if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
      outcome = { skipped: { requestId: id, state: null, reason: `unreadable: ${String(error.details?.reason ?? error.message)}` } };
    }
    const decided = outcome as { changed: Changed } | { skipped: Skipped } | null;
    if (decided && "changed" in decided) changed.push(decided.changed);
    else if (decided) skipped.push(decided.skipped);
  }
  return { changed, skipped };
}
