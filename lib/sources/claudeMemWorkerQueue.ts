import { formatDuration } from "../model/duration";
import { plural } from "../model/plural";
import type { RequestRecord } from "../model/requestFormat";
import type { State } from "../model/states";
import type { SourceDb } from "../sqlite/openSourceDb";
import { spellSteps } from "../spells/spellStore";
import type { SourceMessage, SourceStep, StuckReason } from "./sourceMessage";
import type { Row, SourceQueue } from "./sourceQueue";

/** claude-mem's own stuck limit for work in progress, applied to a queue that does not go down. */
const WORKER_STUCK_AFTER_MS = 5 * 60_000;

const ID = /^claude-mem-queue-(\d{1,18})$/;
const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/** The spells as a source queue: `claude-mem-queue-<n>`, newest first, stuck when the queue does not go down for claude-mem's own limit. */
export function claudeMemWorkerQueue(file: string, stuckAfterMs = WORKER_STUCK_AFTER_MS): SourceQueue {
  return {
    kind: "claude-mem",
    file,
    table: "spells",
    keptByReqwatch: true,
    from: "spells t",
    select:
      "t.pid, t.version, t.state, t.started_at, t.processing_at, t.progress_at, t.ended_at, t.last_at, t.depth, t.max_depth, t.arrived, t.done, t.parked, t.active, t.degraded, t.error",
    id: "t.seq",
    status: "t.state",
    statusValues: { queued: "queued", processing: "processing", completed: "completed", failed: "failed" },
    created: "t.started_at",
    times: ["t.last_at"],
    workspace: "'claude-mem'",
    session: null,
    text: ["t.error", "t.degraded"],
    rowId: (requestId) => ID.exec(requestId)?.[1] ?? null,
    requestId: (row) => `claude-mem-queue-${String(row._id)}`,
    // Its rows are small, and what a stuck spell says reads most of them.
    facts: "t.state, t.started_at, t.progress_at, t.depth, t.done, t.parked, t.degraded",
    settled: [],
    stuck: (row, now) => spellStuck(row, now, stuckAfterMs),
    toMessage: (row, now) => spellMessage(row, now, stuckAfterMs),
    details: (db, rowId) => spellStory(db, rowId),
  };
}

function spellMessage(row: Row, now: number, stuckAfterMs: number): SourceMessage {
  const state = row.state as State;
  const startedAt = num(row.started_at) ?? 0;
  const depth = num(row.depth) ?? 0;
  const endedAt = num(row.ended_at);
  const done = num(row.done) ?? 0;
  const live = state === "queued" || state === "processing";
  const request: RequestRecord = {
    requestId: `claude-mem-queue-${String(row._id)}`,
    workspace: "claude-mem",
    state,
    createdAt: startedAt,
    queuedAt: startedAt,
    ...(num(row.processing_at) !== undefined && { processingStartedAt: num(row.processing_at) }),
    ...(endedAt !== undefined && !live && { completedAt: endedAt }),
    lastUpdatedAt: num(row.last_at) ?? startedAt,
    prompt: `claude-mem worker queue${row.pid ? ` (pid ${String(row.pid)}${row.version ? `, v${String(row.version)}` : ""})` : ""}: up to ${plural(num(row.max_depth) ?? depth, "observation")}`,
    ...(typeof row.error === "string" && { error: row.error }),
  };
  const stuck = spellStuck(row, now, stuckAfterMs)?.() ?? null;
  const note = live
    ? [`${depth} waiting`, state === "processing" ? "processing" : "not processing", done && `${done} done`, plural(num(row.active) ?? 0, "active session")]
        .filter(Boolean)
        .join(", ")
    : `${done} done`;
  return { request, stuck, note };
}

/** A spell still going on is stuck when the queue has not gone down for `stuckAfterMs`. */
function spellStuck(row: Row, now: number, stuckAfterMs: number): StuckReason {
  const state = row.state as State;
  const depth = num(row.depth) ?? 0;
  const waited = now - (num(row.progress_at) ?? num(row.started_at) ?? 0);
  const done = num(row.done) ?? 0;
  if (!(state === "queued" || state === "processing") || waited < stuckAfterMs) return null;
  return () =>
    [
      `${plural(depth, "observation")} waiting ${formatDuration(waited)} with no progress (${done ? `the queue last went down ${formatDuration(waited)} ago` : "none has left the queue since it filled"})`,
      num(row.parked) ? `${plural(num(row.parked)!, "session")} parked, waiting for an agent slot` : null,
      typeof row.degraded === "string" ? `claude-mem reports ${row.degraded}` : null,
      "they are in the worker's memory only: stopping it loses them",
    ]
      .filter(Boolean)
      .join("; ");
}

function spellStory(db: SourceDb, rowId: string): Pick<SourceMessage, "steps"> {
  return { steps: spellSteps(db, rowId).map((step): SourceStep => ({ ...step, detail: step.detail as SourceStep["detail"] })) };
}
