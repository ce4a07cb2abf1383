import { randomUUID } from "node:crypto";
import { commitChange, withWritersLock } from "../commitChange";
import type { TrackerContext } from "../context";
import { isReqwatchError } from "../errors";
import { statement } from "../index/statements";
import { currentProcess } from "../process/liveness";
import type { RequestRecord } from "../schema";
import { applyChange } from "../transition";

export interface ClaimOptions {
  /** Only claim from this workspace. */
  workspace?: string;
  /** Who is claiming, for the history (default `pid <pid>`). */
  worker?: string;
}

export interface Claim {
  request: RequestRecord;
  /** Pass to heartbeat, complete and fail: only the current claim's token is accepted. */
  token: string;
}

/** How many ready candidates one claim looks at before giving up (the rest were taken or changed). */
const CANDIDATES = 16;

/**
 * Move the oldest ready `queued` request to `processing` and return it with a fresh claim token.
 * The candidate query and the write happen under the writers' lock, so two workers, in any
 * processes, never get the same request. Null when nothing is ready.
 */
export function claimNext(ctx: TrackerContext, options: ClaimOptions = {}): Claim | null {
  const me = currentProcess();
  const by = options.worker ?? `pid ${me.pid}`;
  return withWritersLock(ctx, () => {
    const now = ctx.now();
    const candidates = (
      options.workspace === undefined
        ? statement(ctx.db, READY).pluck().all(now, CANDIDATES)
        : statement(ctx.db, READY_IN_WORKSPACE).pluck().all(now, options.workspace, CANDIDATES)
    ) as string[];
    for (const id of candidates) {
      const token = randomUUID();
      let claimed: RequestRecord | null = null;
      try {
        commitChange(ctx, id, (current) => {
          // The file is the truth: skip a candidate that another writer moved on since the index said ready.
          if (!current || current.state !== "queued" || (current.notBefore ?? 0) > now) return current;
          claimed = applyChange(
            current,
            {
              to: "processing",
              reason: "claimed",
              by,
              managed: { claim: { token, pid: me.pid, host: me.host, ...(me.processStartedAt !== null && { processStartedAt: me.processStartedAt }), claimedAt: now, heartbeatAt: now } },
              note: { token },
            },
            now,
          );
          return claimed;
        });
      } catch (error) {
        // An unreadable file is reported by reconciliation; it must not stop the queue.
        if (isReqwatchError(error, "CORRUPT_FILE")) continue;
        throw error;
      }
      if (claimed) return { request: claimed, token };
    }
    return null;
  });
}

const READY = `SELECT id FROM requests WHERE state = 'queued' AND (not_before IS NULL OR not_before <= ?)
  ORDER BY state_since, id LIMIT ?`;
const READY_IN_WORKSPACE = `SELECT id FROM requests WHERE state = 'queued' AND (not_before IS NULL OR not_before <= ?)
  AND workspace = ? ORDER BY state_since, id LIMIT ?`;
