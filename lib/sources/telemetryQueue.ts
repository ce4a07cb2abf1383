import { formatDuration } from "../model/duration";
import { formatCost } from "../model/money";
import type { RequestRecord } from "../model/requestFormat";
import { STATES, type State } from "../model/states";
import { ReqwatchError } from "../model/errors";
import { openSourceDb, sourceReadError, type SourceDb } from "./openSourceDb";
import type { SourceMessage, SourcePart, SourceRead, SourceStep, StuckReason } from "./sourceMessage";
import { readQueue, type Listing } from "./queueLook";
import type { Row, SourceQueue } from "./sourceQueue";

/** A lifecycle still going on with nothing received for it this long is stuck: an agent's turn with no event for 10 minutes. */
export const DEFAULT_TELEMETRY_STUCK_AFTER_MS = 10 * 60_000;

const ID = /^(turn|call|message|agent)-(\d{1,18})$/;

/**
 * The telemetry store's lifecycles (lib/telemetry/telemetryStore.ts, which writes them) as a source the dashboard
 * shows beside the folder's requests, with the same table, filters and pages: a turn as
 * `turn-<n>`, an agent's run as `agent-<n>`, a model call as `call-<n>`, a message as `message-<n>`, newest first; its calls'
 * tokens and cost in the row; its steps and parts on its own page.
 */
export function telemetryQueue(file: string, stuckAfterMs = DEFAULT_TELEMETRY_STUCK_AFTER_MS): SourceQueue {
  return {
    kind: "otel",
    file,
    table: "lifecycles",
    keptByReqwatch: true,
    from: "lifecycles t",
    select: "t.kind, t.state, t.started_at, t.queued_at, t.processing_at, t.finished_at, t.last_at, t.received_at, t.prompt, t.output, t.error, t.model, t.attempt, t.last_step, t.calls, t.tools, t.input_tokens, t.output_tokens, t.cache_read_tokens, t.cache_write_tokens, t.cost_usd, t.estimated_calls, t.unpriced_calls, t.trace_id",
    id: "t.seq",
    status: "t.state",
    statusValues: Object.fromEntries(STATES.map((state) => [state, state])) as Record<string, State>,
    created: "t.started_at",
    times: ["t.received_at"],
    workspace: "coalesce(reqwatch_name(t.service, 64), 'otel')",
    session: "reqwatch_name(t.session, 128)",
    text: ["t.prompt", "t.output", "t.error", "t.last_step", "t.model"],
    rowId: (requestId) => ID.exec(requestId)?.[2] ?? null,
    requestId: (row) => `${String(row.kind)}-${String(row._id)}`,
    facts: "t.kind, t.state, t.started_at, t.last_at, t.received_at, t.last_step",
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
  const note = [calls > 0 && `${calls} model call${calls === 1 ? "" : "s"}`, tools > 0 && `${tools} tool use${tools === 1 ? "" : "s"}`, inputTokens + outputTokens > 0 && `${inputTokens} in / ${outputTokens} out tokens`, calls > 0 && (costs.costUsd > 0 || costs.estimatedCalls > 0 || costs.unpricedCalls > 0) && formatCost(costs)].filter(Boolean).join(", ");
  return { request, stuck, note: note || null };
}

/** A lifecycle still going on is stuck when nothing was received for it for `stuckAfterMs`. */
function stuckOf(row: Row, now: number, stuckAfterMs: number): StuckReason {
  const state = row.state as State;
  const receivedAt = num(row.received_at) ?? 0;
  const lastAt = num(row.last_at) ?? num(row.started_at) ?? 0;
  const live = state === "created" || state === "queued" || state === "processing";
  return live && now - receivedAt >= stuckAfterMs ? () => `nothing received for ${formatDuration(now - receivedAt)}; last: ${String(row.last_step)} (${formatDuration(Math.max(0, now - lastAt))} ago)` : null;
}

/** A lifecycle's steps, oldest first (each with the error it told of), and its model calls and tool uses, each once. */
function details(db: SourceDb, rowId: string): Pick<SourceMessage, "steps" | "parts"> {
  const steps = db
    .prepare("SELECT step_key AS key, at, start_at AS startAt, parent_key AS parentKey, part_key AS partKey, name, summary, detail, json_extract(facts, '$.error') AS error FROM steps WHERE seq = ? ORDER BY at, step_key")
    .all(rowId) as { key: string; at: number; startAt: number | null; parentKey: string | null; partKey: string | null; name: string; summary: string; detail: string; error: unknown }[];
  const parts = db.prepare("SELECT kind, id, at, fields FROM parts WHERE seq = ? ORDER BY at, kind, id").all(rowId) as { kind: SourcePart["kind"]; id: string; at: number; fields: string }[];
  return {
    steps: steps.map(
      (step): SourceStep => ({
        key: step.key,
        at: step.at,
        ...(step.startAt !== null && { startAt: step.startAt }),
        ...(step.parentKey !== null && { parentKey: step.parentKey }),
        ...(step.partKey !== null && { partKey: step.partKey }),
        name: step.name,
        summary: step.summary,
        detail: JSON.parse(step.detail) as SourceStep["detail"],
        ...(typeof step.error === "string" && step.error !== "" && { error: step.error }),
      }),
    ),
    parts: parts.map((part) => ({ kind: part.kind, id: part.id, at: part.at, fields: JSON.parse(part.fields) as SourcePart["fields"] })),
  };
}

/** The telemetry store, opened to read; a store that does not exist yet is said as such: nothing was received. */
export function openTelemetryStore(file: string, busyMs?: number): SourceDb {
  try {
    return openSourceDb(file, "telemetry store", busyMs === undefined ? {} : { busyMs });
  } catch (error) {
    if (error instanceof ReqwatchError && error.code === "NOT_FOUND") {
      throw new ReqwatchError("NOT_FOUND", `Nothing was received for this state folder yet: the dashboard keeps what its OpenTelemetry receiver gets in ${file} (see the README's "See Claude Code and other OpenTelemetry apps").`, { file });
    }
    throw error;
  }
}

/**
 * Read the store once and close it; `empty` when nothing was received yet (no store is made for
 * it), or when the store is damaged: the receiver sets it aside and starts a new one (Health names
 * it), and what reads it (a page, the sessions list) goes on meanwhile.
 */
export function readTelemetryStore<T>(file: string, empty: T, read: (db: SourceDb) => T): T {
  let db: SourceDb;
  try {
    db = openTelemetryStore(file);
  } catch (error) {
    if (error instanceof ReqwatchError && (error.code === "NOT_FOUND" || error.code === "CORRUPT_FILE")) return empty;
    throw error;
  }
  try {
    return read(db);
  } catch (error) {
    if (sourceReadError(error, file, "telemetry store").code === "CORRUPT_FILE") return empty;
    throw error;
  } finally {
    db.close();
  }
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
