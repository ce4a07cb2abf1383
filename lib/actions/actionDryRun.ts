import type { SkipSummary } from "../db/auditLog";
import type { State } from "../model/states";
import type { ActionInput } from "./actionInput";

/** The dry run: what the action would do now. */
export interface ActionDryRun {
  kind: ActionInput["kind"] | "undo";
  summary: string;
  /** Send it back with the run, which asks the same: it acts on exactly what this dry run described (kept for a while, for every process on the folder). */
  dryRunId: string;
  /** A cleanup's cutoff: requests not updated since this time. */
  cutoff?: number;
  matched: number;
  /** How many it would change, and of which states. */
  willChange: number;
  byState: Partial<Record<State, number>>;
  /** The first ids it would change. */
  firstIds: string[];
  skipped: SkipSummary[];
}

/** How many of the ids a dry run would change it names. */
export const FIRST_IDS = 20;

const SKIP_EXAMPLES = 5;

/** Count a skipped request in its reason's group, keeping a few of its ids as examples. */
export function addSkip(skips: SkipSummary[], reason: string, id: string): void {
  // Group by the reason's kind, not its details ("a live worker (pid 12) holds it" and "pid 13" are one group).
  const key = reason.replace(/\d+/g, "N");
  let group = skips.find((s) => s.reason.replace(/\d+/g, "N") === key);
  if (!group) skips.push((group = { reason, count: 0, ids: [] }));
  group.count++;
  if (group.ids.length < SKIP_EXAMPLES) group.ids.push(id);
}
