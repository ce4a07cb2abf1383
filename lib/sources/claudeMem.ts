import os from "node:os";
import path from "node:path";
import { formatDuration } from "../model/duration";
import { ReqwatchError } from "../model/errors";
import type { RequestRecord } from "../model/requestFormat";
import type { State } from "../model/states";
import { pidExists } from "../process/liveness";
import { openSourceDb, sourceReadError, type SourceDb } from "../sqlite/openSourceDb";
import { epochMs } from "../model/storedValues";
import type { SourceMessage, SourceRead, StuckReason } from "./sourceMessage";
import { readQueue, type Listing } from "./queueLook";
import type { Row, SourceQueue } from "./sourceQueue";

/** Where claude-mem keeps its database unless told otherwise. */
export function defaultClaudeMemPath(): string {
  return path.join(os.homedir(), ".claude-mem", "claude-mem.db");
}

/** claude-mem's own stuck rule (its stuck-message reset): processing longer than this. */
const CLAUDE_MEM_PROCESSING_LIMIT_MS = 5 * 60_000;
/** claude-mem's retries before it marks a message failed. */
const CLAUDE_MEM_MAX_RETRIES = 3;
/** A table of a generation that no longer processes it, not written for this long, holds left-overs; a message pending this long has no worker. */
export const LEFT_OVER_AFTER_MS = 60 * 60_000;

const STATUS_STATE: Readonly<Record<string, State>> = { pending: "queued", processing: "processing", processed: "completed", failed: "failed" };

/** What a `pending_messages` table holds: its columns decide what can be known, never its version. */
export interface ClaudeMemShape {
  /** The release range whose fresh schema this matches best (an upgraded file may keep older columns). */
  generation: string;
  sessionColumn: "content_session_id" | "claude_session_id";
  columns: ReadonlySet<string>;
  /** Whether claude-mem still works through this table: from v12.5.0 its schema drops retries, and from v13.4.0 it keeps the queue in memory. */
  retired: boolean;
  hasSessions: boolean;
}

function has(columns: ReadonlySet<string>, ...names: string[]): boolean {
  return names.every((name) => columns.has(name));
}

/** The table's shape from its columns and indexes. Throws BAD_INPUT naming what is missing. */
export function claudeMemShape(db: SourceDb, file: string): ClaudeMemShape {
  const what = "claude-mem source";
  try {
    const table = (name: string) =>
      new Set((db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(name) as string[]).map((column) => column.toLowerCase()));
    const columns = table("pending_messages");
    if (!columns.size)
      throw new ReqwatchError("BAD_INPUT", `${what}: ${file} has no pending_messages table; is it claude-mem's database (${defaultClaudeMemPath()})?`, {
        file,
      });
    const sessionColumn = columns.has("content_session_id") ? "content_session_id" : columns.has("claude_session_id") ? "claude_session_id" : null;
    const missing = ["id", "status", "created_at_epoch"].filter((name) => !columns.has(name));
    if (!sessionColumn) missing.push("content_session_id (or claude_session_id)");
    if (missing.length)
      throw new ReqwatchError(
        "BAD_INPUT",
        `${what}: ${file}'s pending_messages has a shape reqwatch does not know: no ${missing.join(", ")}. Nothing was read or changed.`,
        { file },
      );
    const uniqueBySessionDb = (db.prepare("SELECT name FROM pragma_index_list('pending_messages') WHERE \"unique\" = 1").pluck().all() as string[]).some(
      (index) => {
        const keys = db.prepare("SELECT name FROM pragma_index_info(?)").pluck().all(index) as string[];
        return keys.join(",") === "session_db_id,tool_use_id";
      },
    );
    const retired = columns.has("tool_use_id") && !columns.has("retry_count");
    return {
      generation: generationOf(columns, sessionColumn!, retired, uniqueBySessionDb),
      sessionColumn: sessionColumn!,
      columns,
      retired,
      hasSessions: table("sdk_sessions").has("id"),
    };
  } catch (error) {
    if (error instanceof ReqwatchError) throw error;
    throw sourceReadError(error, file, what);
  }
}

function generationOf(columns: ReadonlySet<string>, sessionColumn: string, retired: boolean, uniqueBySessionDb: boolean): string {
  if (sessionColumn === "claude_session_id") return "g1 (v7.3.1-v8.2.5)";
  if (retired) return uniqueBySessionDb ? "g8 (v13.9.1 onward)" : "g7 (v12.5.0-v13.9.0)";
  if (columns.has("worker_pid")) return "g6 (v12.4.5-v12.4.9)";
  if (has(columns, "agent_type") && !columns.has("started_processing_at_epoch")) return "g5 (v12.4.0-v12.4.4)";
  if (has(columns, "agent_type")) return "g4 (v12.2.2-v12.3.9)";
  if (has(columns, "failed_at_epoch")) return "g3 (v8.5.5-v12.2.1)";
  return "g2 (v8.2.6-v8.5.4)";
}

/** The claude-mem table as a source queue (lib/sources/sourceQueue.ts), mapped by claude-mem's own rules. */
export function claudeMemQueue(shape: ClaudeMemShape, file: string): SourceQueue {
  const optional = [
    "message_type",
    "tool_name",
    "tool_input",
    "tool_response",
    "last_user_message",
    "retry_count",
    "started_processing_at_epoch",
    "completed_at_epoch",
    "failed_at_epoch",
    "worker_pid",
  ];
  const join = shape.hasSessions && shape.columns.has("session_db_id");
  const prefix = "claude-mem-";
  return {
    kind: "claude-mem",
    file,
    table: "pending_messages",
    from: `pending_messages t${join ? " LEFT JOIN sdk_sessions s ON s.id = t.session_db_id" : ""}`,
    select: ["t.status", "t.created_at_epoch", ...optional.filter((name) => shape.columns.has(name)).map((name) => `t.${name}`)].join(", "),
    id: "t.id",
    status: "t.status",
    statusValues: STATUS_STATE,
    created: "reqwatch_time(t.created_at_epoch)",
    times: ["created_at_epoch", "started_processing_at_epoch", "completed_at_epoch", "failed_at_epoch"]
      .filter((name) => shape.columns.has(name))
      .map((name) => `t.${name}`),
    // The project of the message's session names its workspace, as it does in claude-mem's viewer.
    workspace: `coalesce(${join ? "reqwatch_name(s.project, 64)" : "NULL"}, 'claude-mem')`,
    session: `reqwatch_name(t.${shape.sessionColumn}, 128)`,
    text: ["tool_name", "tool_input", "tool_response", "last_user_message"].filter((name) => shape.columns.has(name)).map((name) => `t.${name}`),
    rowId: (requestId) => (requestId.startsWith(prefix) && /^\d{1,18}$/.test(requestId.slice(prefix.length)) ? requestId.slice(prefix.length) : null),
    requestId: (row) => `${prefix}${String(row._id)}`,
    facts: [
      "t.status",
      "t.created_at_epoch",
      ...["started_processing_at_epoch", "worker_pid"].filter((name) => shape.columns.has(name)).map((name) => `t.${name}`),
    ].join(", "),
    // claude-mem changes a pending message only to claim it (or delete it): its status says when to read it again.
    settled: ["pending"],
    stuck: (row, now, lastWriteAt) => stuckOf(row, shape, now, lastWriteAt),
    toMessage: (row, now, lastWriteAt) => toMessage(row, shape, now, lastWriteAt),
  };
}

function toMessage(row: Row, shape: ClaudeMemShape, now: number, lastWriteAt: number | null): SourceMessage {
  const status = String(row.status);
  const state = STATUS_STATE[status] ?? "failed";
  const createdAt = epochMs(row.created_at_epoch) ?? 0;
  const startedAt = epochMs(row.started_processing_at_epoch);
  const finishedAt = epochMs(row.completed_at_epoch) ?? epochMs(row.failed_at_epoch);
  const retries = typeof row.retry_count === "number" ? row.retry_count : undefined;
  const tool = typeof row.tool_name === "string" && row.tool_name ? row.tool_name : null;
  const kind = typeof row.message_type === "string" ? row.message_type : "message";
  const sessionId = typeof row._session === "string" ? row._session : undefined;
  const input = [row.tool_input, row.last_user_message].find((text): text is string => typeof text === "string" && text.length > 0);
  const request: RequestRecord = {
    requestId: `claude-mem-${String(row._id)}`,
    workspace: String(row._workspace),
    state,
    createdAt,
    queuedAt: createdAt,
    ...(startedAt !== undefined && { processingStartedAt: startedAt }),
    ...(finishedAt !== undefined && (state === "completed" || state === "failed") && { completedAt: finishedAt }),
    lastUpdatedAt: Math.max(createdAt, startedAt ?? 0, finishedAt ?? 0),
    ...(retries !== undefined && { attempt: retries + 1 }),
    ...(sessionId !== undefined && { sessionId }),
    prompt: `${kind}${tool ? ` ${tool}` : ""}${input ? `: ${input}` : ""}`,
    ...(typeof row.tool_response === "string" && { output: row.tool_response }),
    ...(STATUS_STATE[status] === undefined && { error: `claude-mem status ${JSON.stringify(status)}, which reqwatch does not know` }),
  };
  const stuck = stuckOf(row, shape, now, lastWriteAt)?.() ?? null;
  const pid = typeof row.worker_pid === "number" ? row.worker_pid : null;
  const note =
    state === "failed" && retries !== undefined && retries >= CLAUDE_MEM_MAX_RETRIES
      ? `failed after ${retries} retries, claude-mem's limit`
      : state === "processing" && stuck === null && pid !== null
        ? `claude-mem worker pid ${pid} runs`
        : null;
  return { request, stuck, note };
}

/** claude-mem's own stuck rules, on a row's status, times and worker pid. */
function stuckOf(row: Row, shape: ClaudeMemShape, now: number, lastWriteAt: number | null): StuckReason {
  const state = STATUS_STATE[String(row.status)] ?? "failed";
  const createdAt = epochMs(row.created_at_epoch) ?? 0;
  const startedAt = epochMs(row.started_processing_at_epoch);
  if (state !== "queued" && state !== "processing") return null;
  if (shape.retired && lastWriteAt !== null && now - lastWriteAt >= LEFT_OVER_AFTER_MS) {
    return () =>
      `left over: claude-mem from v13.4.0 keeps its queue in memory and no longer processes this table (nothing written for ${formatDuration(now - lastWriteAt)})`;
  }
  if (state === "queued")
    return now - createdAt >= LEFT_OVER_AFTER_MS ? () => `pending ${formatDuration(now - createdAt)}: no claude-mem worker has taken it` : null;
  const pid = typeof row.worker_pid === "number" ? row.worker_pid : null;
  const since = startedAt ?? createdAt;
  const known = startedAt === undefined ? " since it was created (claude-mem did not record when processing started)" : "";
  if (pid !== null && !pidExists(pid)) return () => `processing ${formatDuration(Math.max(0, now - since))}${known}; claude-mem worker pid ${pid} is gone`;
  // Where claude-mem records its worker (v12.4.5-v12.4.9), its own rule is that worker's liveness, not the time.
  if (pid !== null) return null;
  if (now - since > CLAUDE_MEM_PROCESSING_LIMIT_MS)
    return () => `processing ${formatDuration(now - since)}${known}, past claude-mem's own ${formatDuration(CLAUDE_MEM_PROCESSING_LIMIT_MS)} stuck limit`;
  return null;
}

/** Open a claude-mem database read-only and read its queue: what `reqwatch source` shows. Every row unless told how many. */
export function inspectClaudeMem(file: string, now = Date.now(), listing?: Listing): SourceRead & { file: string; shape: ClaudeMemShape } {
  const db = openSourceDb(file, "claude-mem source");
  try {
    const shape = claudeMemShape(db, file);
    return { file, shape, ...readQueue(db, claudeMemQueue(shape, file), now, listing) };
  } finally {
    db.close();
  }
}
