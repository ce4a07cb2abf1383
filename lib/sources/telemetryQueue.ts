import { formatDuration } from "../model/duration";
import { formatCost } from "../model/money";
import type { RequestRecord } from "../model/requestFormat";
import { STATES, type State } from "../model/states";
import type { SourceDb } from "../sqlite/openSourceDb";
import { DEFAULT_TELEMETRY_STUCK_AFTER_MS } from "../telemetry/telemetrySettings";
import { lifecycleDetails } from "../telemetry/store/queries/lifecycleDetails";
import type { Part } from "../telemetry/mapping/changes";
import { joinedParts } from "../telemetry/mapping/fold";
import { LIFECYCLE_ROWS } from "../telemetry/store/queries/lifecycleRows";
import { openTelemetryStore } from "../telemetry/store/readStore";
import type { SourceMessage, SourcePart, SourceRead, SourceStep, StuckReason } from "./sourceMessage";
import { readQueue, type Listing } from "./queueLook";
import type { Row, SourceQueue } from "./sourceQueue";
import { plural } from "../model/plural";

const ID = /^(turn|call|message|agent)-(\d{1,18})$/;

/**
 * The telemetry store's lifecycles (lib/telemetry/store/: its writer and its queries) as a source the dashboard
 * shows beside the folder's requests, with the same table, filters and pages: a turn as
 * `turn-<n>`, an agent's run as `agent-<n>`, a model call as `call-<n>`, a message as `message-<n>`, newest first; its calls'
 * tokens and cost in the row; its steps and parts on its own page.
 */
export function telemetryQueue(file: string, stuckAfterMs = DEFAULT_TELEMETRY_STUCK_AFTER_MS): SourceQueue {
  return {
    kind: "otel",
    file,
    ...LIFECYCLE_ROWS,
    keptByReqwatch: true,
    statusValues: Object.fromEntries(STATES.map((state) => [state, state])) as Record<string, State>,
    rowId: (requestId) => ID.exec(requestId)?.[2] ?? null,
    requestId: (row) => `${String(row.kind)}-${String(row._id)}`,
    // A lifecycle's times move with every record received, whatever its state.
    settled: [],
    stuck: (row, now) => stuckOf(row, now, stuckAfterMs),
    toMessage: (row, now) => toMessage(row, now, stuckAfterMs),
    details: (db, rowId) => details(db, rowId),
  };
}

const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
const str = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

function toMessage(row: Row, now: number, stuckAfterMs: number): SourceMessage {
  const state = row.state as State;
  const startedAt = num(row.started_at) ?? 0;
  const finishedAt = num(row.finished_at);
  const inputTokens = num(row.input_tokens) ?? 0;
  const outputTokens = num(row.output_tokens) ?? 0;
  const request: RequestRecord = {
    requestId: `${String(row.kind)}-${String(row._id)}`,
    workspace: String(row._workspace),
    state,
    createdAt: startedAt,
    ...(num(row.queued_at) !== undefined && { queuedAt: num(row.queued_at) }),
    ...(num(row.processing_at) !== undefined && { processingStartedAt: num(row.processing_at) }),
    ...(finishedAt !== undefined && (state === "completed" || state === "failed") && { completedAt: finishedAt }),
    lastUpdatedAt: num(row.last_at) ?? startedAt,
    ...(typeof row._session === "string" && { sessionId: row._session }),
    ...(str(row.prompt) !== undefined && { prompt: str(row.prompt) }),
    ...(str(row.output) !== undefined && { output: str(row.output) }),
    ...(str(row.error) !== undefined && { error: str(row.error) }),
    ...(str(row.model) !== undefined && { model: str(row.model) }),
    ...(inputTokens + outputTokens > 0 && { tokens: inputTokens + outputTokens }),
    ...(num(row.attempt) !== undefined && { attempt: num(row.attempt) }),
  };
  const stuck = stuckOf(row, now, stuckAfterMs)?.() ?? null;
  const calls = num(row.calls) ?? 0;
  const tools = num(row.tools) ?? 0;
  const costs = { calls, costUsd: num(row.cost_usd) ?? 0, estimatedCalls: num(row.estimated_calls) ?? 0, unpricedCalls: num(row.unpriced_calls) ?? 0 };
  const note = [
    calls > 0 && plural(calls, "model call"),
    tools > 0 && plural(tools, "tool use"),
    inputTokens + outputTokens > 0 && `${inputTokens} in / ${outputTokens} out tokens`,
    calls > 0 && (costs.costUsd > 0 || costs.estimatedCalls > 0 || costs.unpricedCalls > 0) && formatCost(costs),
  ]
    .filter(Boolean)
    .join(", ");
  return { request, stuck, note: note || null };
}

/**
 * A lifecycle still going on is stuck when the program running it ended mid-way (an agent's run
 * killed: at once, saying so), when it waits on something (an agent's files say what) and nothing
 * was written for `stuckAfterMs` (saying what it waits on, its attempt and its last error), or when
 * nothing was received for it for `stuckAfterMs`.
 */
function stuckOf(row: Row, now: number, stuckAfterMs: number): StuckReason {
  const state = row.state as State;
  const receivedAt = num(row.received_at) ?? 0;
  const lastAt = num(row.last_at) ?? num(row.started_at) ?? 0;
  const live = state === "created" || state === "queued" || state === "processing";
  if (!live) return null;
  const abandonedBy = str(row.abandoned_by);
  if (abandonedBy) return () => `${abandonedBy} ended mid-turn ${formatDuration(Math.max(0, now - (num(row.abandoned_at) ?? lastAt)))} ago`;
  const waitingOn = str(row.waiting_on);
  if (waitingOn) {
    const attempt = num(row.attempt) ?? 1;
    const error = str(row.error);
    return now - lastAt >= stuckAfterMs
      ? () =>
          [`waiting on ${waitingOn} for ${formatDuration(now - lastAt)}`, attempt > 1 && `attempt ${attempt}`, error && `last error ${error}`]
            .filter(Boolean)
            .join(", ")
      : null;
  }
  return now - receivedAt >= stuckAfterMs
    ? () => `nothing received for ${formatDuration(now - receivedAt)}; last: ${String(row.last_step)} (${formatDuration(Math.max(0, now - lastAt))} ago)`
    : null;
}

/** A lifecycle's steps, oldest first (each with the error it told of), and its model calls and tool uses, each once. */
function details(db: SourceDb, rowId: string): Pick<SourceMessage, "steps" | "parts"> {
  const stored = lifecycleDetails(db, rowId);
  // A call its files and its telemetry each told (named by each its own way) is one, as its row counts it.
  const { parts, renamed } = joinedParts(
    stored.parts.map((part) => ({ kind: part.kind, id: part.id, at: part.at, fields: JSON.parse(part.fields) as Part["fields"] })),
  );
  const steps = stored.steps.map((step) => (step.partKey !== null && renamed.has(step.partKey) ? { ...step, partKey: renamed.get(step.partKey)! } : step));
  return {
    steps: steps.map((step): SourceStep => ({
      key: step.key,
      at: step.at,
      ...(step.startAt !== null && { startAt: step.startAt }),
      ...(step.parentKey !== null && { parentKey: step.parentKey }),
      ...(step.partKey !== null && { partKey: step.partKey }),
      name: step.name,
      summary: step.summary,
      detail: JSON.parse(step.detail) as SourceStep["detail"],
      ...(typeof step.error === "string" && step.error !== "" && { error: step.error }),
    })),
    parts: parts.map((part): SourcePart => ({ ...part, fields: { ...part.fields } })),
  };
}

/** Read the store once, as `reqwatch source otel` and the MCP tool do: counts, the stuck, the rows the listing asks for. */
export function inspectTelemetry(file: string, stuckAfterMs: number | undefined, now = Date.now(), listing?: Listing): SourceRead {
  const db = openTelemetryStore(file);
  try {
    return readQueue(db, telemetryQueue(file, stuckAfterMs), now, listing);
  } finally {
    db.close();
  }
}
