import { randomUUID } from "../process/crypto";
import { keepDryRun, takeDryRun, type DryRun } from "../db/dryRuns";
import { formatDuration } from "../model/duration";
import { ReqwatchError } from "../model/errors";
import { TERMINAL_STATES } from "../model/states";
import type { TrackerContext } from "../store/context";
import type { ActionInput } from "./actionInput";
import { auditTarget, describeAction } from "./describeAction";

/** Dry runs kept for their runs: how long, and how many (the dashboards and agents on a folder have a few open at most). */
const DRY_RUN_TTL_MS = 15 * 60 * 1000;
const DRY_RUNS_KEPT = 100;

/** Objects with their keys in order, lists of names as sets: two inputs that ask the same read the same. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.every((item) => typeof item === "string") ? [...new Set(value as string[])].sort() : value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, item]) => item !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([key, item]) => [key, canonical(item)]),
    );
  }
  return value;
}

/** An action's arguments in one form, to tell whether a run asks what its dry run was asked. */
function askedOf(input: ActionInput): string {
  if (input.kind === "cleanup") return JSON.stringify(canonical({ kind: "cleanup", olderThanMs: input.olderThanMs, states: input.states ?? TERMINAL_STATES }));
  if (input.kind === "retry" && input.query !== undefined) {
    const query = new URLSearchParams(input.query);
    query.sort();
    return JSON.stringify(canonical({ kind: "retry", query: query.toString() }));
  }
  return JSON.stringify(canonical({ ...input, dryRunId: undefined }));
}

/**
 * Keep what a dry run fixed for its run, in the index, where every process on the folder finds it
 * (an agent's client may start a new server for the confirmation); returns the id the run names it by.
 */
export function storeDryRun(ctx: TrackerContext, input: ActionInput, summary: string, ids: string[], cutoff?: number): string {
  const now = ctx.now();
  const id = randomUUID();
  keepDryRun(
    ctx,
    { id, kind: input.kind, asked: askedOf(input), summary, target: auditTarget(input, cutoff), ids, cutoff: cutoff ?? null, expiresAt: now + DRY_RUN_TTL_MS },
    now,
    DRY_RUNS_KEPT,
  );
  return id;
}

/**
 * The dry run a run names, taken for it: an unknown or expired one is refused, so nothing runs
 * unseen, and so is a run that asks otherwise, whose audit entry would not say what it did.
 */
export function takeStoredDryRun(ctx: TrackerContext, input: ActionInput): DryRun | null {
  if (input.dryRunId === undefined) return null;
  const taken = takeDryRun(ctx, input.dryRunId, askedOf(input), ctx.now());
  if (taken.outcome === "taken") return taken.dryRun;
  if (taken.outcome === "unknown") {
    throw new ReqwatchError(
      "BAD_INPUT",
      `Dry run ${input.dryRunId} is not known: it expired (a dry run is kept ${formatDuration(DRY_RUN_TTL_MS)}), was confirmed already, or was made on another state folder. Make the dry run again.`,
    );
  }
  const asked = describeAction(input);
  const differs =
    asked === taken.dryRun.summary
      ? `"${asked}" with other arguments than dry run ${input.dryRunId}`
      : `"${asked}", but dry run ${input.dryRunId} was "${taken.dryRun.summary}"`;
  throw new ReqwatchError("BAD_INPUT", `This confirmation asks ${differs}. Nothing was done: confirm with the dry run's own arguments, or make a new dry run.`);
}
