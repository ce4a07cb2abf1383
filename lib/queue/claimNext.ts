import { randomUUID } from "../process/crypto";
import { commitChange } from "../store/commitChange";
import type { TrackerContext } from "../store/context";
import { isReqwatchError } from "../model/errors";
import { isPaused, pausedWorkspaces } from "../stateFiles/pauseFile";
import { releaseReservation, reserveOldestReady } from "../db/claims";
import { currentProcess } from "../process/liveness";
import type { RequestRecord } from "../model/requestFormat";
import { applyChange } from "../model/transition";
import { assertWorkspace } from "../model/ids";
import { assertManaged } from "../store/ownership";
import type { ClaimOptions, Claim } from "../types";

/**
 * How long a reservation keeps other claimers off a request while its claim is written. A claimer
 * that dies holding one delays that request by this much, no more.
 */
const RESERVATION_MS = 5000;
/** Candidates one claim goes through before it gives up (the rest were taken or changed meanwhile). */
const MAX_CANDIDATES = 16;

/**
 * Move the oldest ready `queued` request to `processing` and return it with a fresh claim token.
 * Two workers, in any processes, never get the same request: the claim is written through the one
 * write path, which checks under the lock that the file is still the queued one it read. Null when
 * nothing is ready.
 */
export function claimNext(ctx: TrackerContext, options: ClaimOptions = {}): Claim | null {
  if (options.workspace !== undefined) assertWorkspace(options.workspace);
  assertManaged(ctx, "Claiming");
  const me = currentProcess();
  const by = options.worker ?? `pid ${me.pid}`;
  for (let tried = 0; tried < MAX_CANDIDATES; tried++) {
    const now = ctx.now();
    // Reserved first, so that concurrent claimers spread over the queue in order instead of all
    // writing a claim for the same request and all but one losing.
    // Read at every claim, from the files: a pause holds from the moment it is written, in every process.
    const paused = pausedWorkspaces(ctx.dir);
    if (options.workspace !== undefined && paused.includes(options.workspace)) return null;
    const id = reserveOldestReady(ctx, options.workspace, paused, now, now + RESERVATION_MS, process.pid);
    if (id === null) return null;
    const token = randomUUID();
    let claimed: RequestRecord | null = null;
    try {
      // The guard checks the pause again under the writers' lock, which a pause is written under:
      // a pause that returned before this claim commits holds for it.
      commitChange(
        ctx,
        id,
        (current) => {
          claimed = null;
          // The file is the truth: skip a candidate another writer moved on since the index said ready.
          if (!current || current.state !== "queued" || (current.notBefore ?? 0) > now) return current;
          if (isPaused(ctx.dir, current.workspace)) return current;
          const worker = { pid: me.pid, host: me.host, ...(me.processStartedAt !== null && { processStartedAt: me.processStartedAt }) };
          const claim = { token, ...worker, claimedAt: now, heartbeatAt: now };
          claimed = applyChange(current, { to: "processing", reason: "claimed", by, managed: { claim }, note: { token, worker } }, now);
          return claimed;
        },
        { durability: ctx.options.claimDurability, guard: (next) => !isPaused(ctx.dir, next.workspace) },
      );
    } catch (error) {
      // An unreadable file is reconciliation's to report; it keeps its reservation a while and the queue goes on.
      if (isReqwatchError(error, "CORRUPT_FILE")) continue;
      releaseReservation(ctx.db, id, process.pid);
      throw error;
    }
    if (claimed) return { request: claimed, token };
    releaseReservation(ctx.db, id, process.pid);
  }
  return null;
}
