import type { WorkerRow } from "../db/queries/workers";
import { formatDuration } from "../model/duration";
import { claimLiveness, type Liveness } from "../process/liveness";
import { plural } from "../model/plural";
import type { Reader } from "../roles/reader";

/** A worker as the workers page shows it: what it did, and whether it still runs and how we know. */
export interface WorkerView extends WorkerRow {
  liveness: Liveness;
  /** In a word: alive; exited (gone, and left nothing for the monitor); gone (it left work behind); unknown. */
  status: "alive" | "exited" | "gone" | "unknown";
  /** How we know it is alive or gone, in words. */
  how: string;
  /** For a gone worker: the requests it held and did not finish (running when it went, released, failed). */
  unfinished: { requestId: string; claimedAt: number; outcome: string | null }[];
}

const GONE_LISTED = 50;

function how(row: WorkerRow, liveness: Liveness, now: number): string {
  if (row.pid === null) return "its claims did not record a process (written by an earlier reqwatch): known by name only";
  const beat = row.heartbeatAt === null ? "" : `; last heartbeat ${formatDuration(Math.max(0, now - row.heartbeatAt))} ago`;
  if (liveness === "alive") return `process ${row.pid} runs on this host${row.processStartedAt === null ? "" : ", started when its claims say"}${beat}`;
  if (liveness === "gone") {
    const left = row.holding + row.released;
    return `no process ${row.pid} with its start time on this host (it exited, or the pid was reused)${left ? `; it left ${plural(left, "request")} unfinished` : "; it left nothing unfinished"}`;
  }
  return `on another host (${row.host ?? "unknown"}): known by its heartbeats only${beat || "; none now"}`;
}

export function workersView(reader: Reader, now = Date.now()): WorkerView[] {
  let goneListed = 0;
  return reader.workers().map((row) => {
    const liveness: Liveness =
      row.pid === null ? "unknown" : claimLiveness({ pid: row.pid, ...(row.host !== null && { host: row.host }), processStartedAt: row.processStartedAt });
    const listUnfinished = liveness === "gone" && row.pid !== null && goneListed++ < GONE_LISTED;
    return {
      ...row,
      liveness,
      status: liveness === "gone" && row.holding === 0 && row.released === 0 ? "exited" : liveness,
      how: how(row, liveness, now),
      unfinished: listUnfinished ? reader.unfinishedBy({ pid: row.pid!, host: row.host, processStartedAt: row.processStartedAt }) : [],
    };
  });
}
