import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { formatDuration, parseDuration } from "../model/duration";
import { ReqwatchError } from "../model/errors";
import { REQUEST_ID_PATTERN } from "../model/ids";
import { readRegularFile } from "../fs/readRegularFile";
import { readSmallJson } from "../fs/readSmallJson";
import type { RequestRecord } from "../model/requestFormat";
import { isState, type State } from "../model/states";
import { pidExists } from "../process/liveness";
import { openSourceDb, sourceReadError, type SourceDb } from "../sqlite/openSourceDb";
import { safeName, timeOf } from "../model/storedValues";
import type { SourceMessage, SourceRead, StuckReason } from "./sourceMessage";
import { readQueue, type Listing } from "./queueLook";
import type { SourceQueue } from "./sourceQueue";

const column = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a column name (letters, digits and _)");

/**
 * How a job table maps to requests: `reqwatch source sqlite:<mapping.json>`. Only `database`,
 * `table`, `id`, `status` and `times.created` are required; every column named must exist.
 */
const tableMappingSchema = z.strictObject({
  /** The database file: absolute, or relative to the mapping file. */
  database: z.string().min(1),
  table: column,
  id: column,
  status: z.strictObject({
    column,
    /** Each status value the table holds, and the state it means. */
    values: z.record(z.string(), z.string().refine(isState, "must be a reqwatch state: created, queued, processing, completed, failed or timeout")),
  }),
  times: z.strictObject({
    created: column,
    started: column.optional(),
    finished: column.optional(),
    updated: column.optional(),
  }),
  workspace: column.optional(),
  session: column.optional(),
  prompt: column.optional(),
  output: column.optional(),
  error: column.optional(),
  /** A column with the worker's pid. */
  pid: column.optional(),
  /** Processing longer than this is stuck, unless a marker says otherwise (default 10m). */
  stuckAfter: z.string().optional(),
  /**
   * A job's own folder, from a key of a JSON column (a `taskDir` key in a `payload` column, say), and the
   * marker files in it: `done` (a result waits to be recovered) and `pid` (a file with the worker's pid).
   */
  markers: z
    .strictObject({
      payload: column,
      key: z.string().min(1),
      done: z.string().min(1).optional(),
      pid: z.string().min(1).optional(),
    })
    .optional(),
});

type TableMapping = z.infer<typeof tableMappingSchema>;

const DEFAULT_STUCK_AFTER_MS = 10 * 60_000;

/** A mapping is a few lines; anything larger is not one. */
const MAX_MAPPING_BYTES = 1024 * 1024;
/** A pid file holds a number. */
const MAX_PID_FILE_BYTES = 64;

/**
 * Read and check a mapping file; its database path is made absolute. Only a small regular file is
 * read, and no error quotes what it holds: the path may have come from someone who may not read it.
 */
export function readTableMapping(file: string): TableMapping {
  const read = readSmallJson(file, { maxBytes: MAX_MAPPING_BYTES, links: "follow" });
  if ("missing" in read) throw new ReqwatchError("NOT_FOUND", `sqlite source: cannot read the mapping ${file}: it does not exist.`, { file });
  if ("problem" in read)
    throw new ReqwatchError(read.reason === "unreadable" ? "IO_ERROR" : "BAD_INPUT", `sqlite source: the mapping ${file} ${read.problem}; nothing was read.`, {
      file,
    });
  const wrong = (where: string, what: string) => new ReqwatchError("BAD_INPUT", `sqlite source: the mapping ${file} is wrong at ${where}: ${what}.`, { file });
  const parsed = tableMappingSchema.safeParse(read.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw wrong(issue.path.join(".") || "its top", /received undefined$/.test(issue.message) ? "it is required" : issue.message);
  }
  if (parsed.data.stuckAfter !== undefined) {
    try {
      parseDuration(parsed.data.stuckAfter, "stuckAfter");
    } catch {
      throw wrong("stuckAfter", `${JSON.stringify(parsed.data.stuckAfter)} is not a duration; use a number with a unit: 250ms, 30s, 15m, 1h, 7d`);
    }
  }
  return { ...parsed.data, database: path.resolve(path.dirname(file), parsed.data.database) };
}

function text(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === "string" ? value : String(value);
}

/** A job's folder from its JSON payload, or null when the payload does not name one. */
function jobDir(payload: unknown, key: string): string | null {
  if (typeof payload !== "string") return null;
  try {
    const value = (JSON.parse(payload) as Record<string, unknown>)[key];
    return typeof value === "string" && value ? value : null;
  } catch {
    return null;
  }
}

/**
 * The pid in a job's pid file, at a path the other program's database names. Anything but a small
 * regular file is not read (a FIFO would freeze the reader) and is said in the job's note.
 */
function readPidFile(file: string): { pid: number | null; problem: string | null } {
  const read = readRegularFile(file, { maxBytes: MAX_PID_FILE_BYTES, links: "follow" });
  if ("missing" in read) return { pid: null, problem: null };
  if ("problem" in read) return { pid: null, problem: `its pid file ${file} ${read.problem}: not read` };
  const pid = Number(read.text.trim());
  return { pid: Number.isInteger(pid) && pid > 0 ? pid : null, problem: null };
}

/** The mapped table as a source queue (lib/sources/sourceQueue.ts), once every column the mapping names is found in it. */
export function tableQueue(db: SourceDb, mapping: TableMapping): SourceQueue & { columns: string[] } {
  const what = "sqlite source";
  const file = mapping.database;
  let columns: Set<string>;
  try {
    columns = new Set((db.prepare("SELECT name FROM pragma_table_info(?)").pluck().all(mapping.table) as string[]).map((name) => name.toLowerCase()));
  } catch (error) {
    throw sourceReadError(error, file, what);
  }
  if (!columns.size) throw new ReqwatchError("BAD_INPUT", `${what}: ${file} has no table ${mapping.table}.`, { file });
  // Each column the mapping names, under the key that names it.
  const keyed: [string, string | undefined][] = [
    ["id", mapping.id],
    ["status.column", mapping.status.column],
    ...Object.entries(mapping.times).map(([key, name]): [string, string | undefined] => [`times.${key}`, name]),
    ...(["workspace", "session", "prompt", "output", "error", "pid"] as const).map((key): [string, string | undefined] => [key, mapping[key]]),
    ["markers.payload", mapping.markers?.payload],
  ];
  const named = [...new Set(keyed.map(([, name]) => name).filter((name): name is string => name !== undefined))];
  const missing = keyed.filter(([, name]) => name !== undefined && !columns.has(name.toLowerCase())).map(([key, name]) => `${key} (${name})`);
  if (missing.length) {
    throw new ReqwatchError(
      "BAD_INPUT",
      `${what}: the mapping names columns ${mapping.table} in ${file} does not have: ${missing.join(", ")}; it has ${[...columns].join(", ")}. Nothing was read or changed.`,
      { file },
    );
  }
  const column = (name: string) => `t."${name}"`;
  const stuckAfterMs = mapping.stuckAfter === undefined ? DEFAULT_STUCK_AFTER_MS : parseDuration(mapping.stuckAfter, "stuckAfter");
  const prefix = `${mapping.table}-`;
  return {
    kind: "sqlite",
    file,
    table: mapping.table,
    columns: [...columns].sort(),
    from: `"${mapping.table}" t`,
    select: named.map((name) => `${column(name)} AS "${name}"`).join(", "),
    id: column(mapping.id),
    status: column(mapping.status.column),
    statusValues: mapping.status.values as Record<string, State>,
    created: `reqwatch_time(${column(mapping.times.created)})`,
    times: Object.values(mapping.times).map(column),
    workspace: mapping.workspace
      ? `coalesce(reqwatch_name(${column(mapping.workspace)}, 64), '${mapping.table.slice(0, 64)}')`
      : `'${mapping.table.slice(0, 64)}'`,
    session: mapping.session ? `reqwatch_name(${column(mapping.session)}, 128)` : null,
    text: [mapping.prompt, mapping.output, mapping.error].filter((name): name is string => name !== undefined).map(column),
    // The id as the row keeps it (a request id shows it with anything but letters, digits, _ and - as _).
    rowId: (requestId) => (requestId.startsWith(prefix) && requestId.length > prefix.length ? requestId.slice(prefix.length) : null),
    requestId: (row) => requestIdOf(row, mapping),
    // What the stale-job rules read: the status, when it started, its pid and where its markers are.
    facts: [...new Set([mapping.status.column, mapping.times.created, mapping.times.started, mapping.pid, mapping.markers?.payload])]
      .filter((name): name is string => name !== undefined)
      .map((name) => `${column(name)} AS "${name}"`)
      .join(", "),
    settled: [],
    stuck: (row, now) => stuckOf(row, mapping, stuckAfterMs, now),
    toMessage: (row, now) => toMessage(row, mapping, stuckAfterMs, now),
  };
}

/** A job's request id: the table's name and the row's id, as a request id allows. */
function requestIdOf(row: Record<string, unknown>, mapping: TableMapping): string {
  return safeName(`${mapping.table}-${text(row._id) ?? ""}`, REQUEST_ID_PATTERN, 128)!;
}

function stateOfRow(row: Record<string, unknown>, mapping: TableMapping): State | undefined {
  return mapping.status.values[text(row[mapping.status.column]) ?? ""] as State | undefined;
}

/** The stale-job rules on a row's facts (toMessage says the same, and what cannot be read besides). */
function stuckOf(row: Record<string, unknown>, mapping: TableMapping, stuckAfterMs: number, now: number): StuckReason {
  const at = (column: string | undefined) => (column ? timeOf(row[column]) : undefined);
  const { stuck } = judge(
    row,
    mapping,
    stateOfRow(row, mapping) ?? "failed",
    at(mapping.times.started) ?? at(mapping.times.created) ?? null,
    stuckAfterMs,
    now,
  );
  return stuck === null ? null : () => stuck;
}

/**
 * Open the mapped table read-only: the count per status, the newest time, the stuck jobs (by their
 * markers and pid) and the rows the listing asks for.
 */
export function inspectTable(mapping: TableMapping, now = Date.now(), listing?: Listing): SourceRead & { columns: string[] } {
  const db = openSourceDb(mapping.database, "sqlite source");
  try {
    const queue = tableQueue(db, mapping);
    return { columns: queue.columns, ...readQueue(db, queue, now, listing) };
  } finally {
    db.close();
  }
}

function toMessage(row: Record<string, unknown>, mapping: TableMapping, stuckAfterMs: number, now: number): SourceMessage {
  const status = text(row[mapping.status.column]) ?? "";
  const mapped = stateOfRow(row, mapping);
  const state: State = mapped ?? "failed";
  const problems: string[] = [];
  // A time that cannot be read is said, never taken as 1970.
  const time = (key: keyof TableMapping["times"]) => {
    const column = mapping.times[key];
    if (!column) return undefined;
    const value = row[column];
    const ms = timeOf(value);
    if (ms === undefined && value !== null && value !== undefined && value !== "")
      problems.push(`${column} holds ${JSON.stringify(value)}, which is not a time`);
    return ms;
  };
  const created = time("created");
  const startedAt = time("started");
  const finishedAt = time("finished");
  const updatedAt = time("updated");
  const createdAt = created ?? startedAt ?? finishedAt ?? updatedAt ?? 0;
  if (mapped === undefined) problems.unshift(`status ${JSON.stringify(status)} is not in the mapping's status.values`);
  const id = requestIdOf(row, mapping);
  const sessionId = typeof row._session === "string" ? row._session : undefined;
  const request: RequestRecord = {
    requestId: id,
    workspace: String(row._workspace),
    state,
    createdAt,
    queuedAt: createdAt,
    ...(startedAt !== undefined && { processingStartedAt: startedAt }),
    ...(finishedAt !== undefined && (state === "completed" || state === "failed" || state === "timeout") && { completedAt: finishedAt }),
    lastUpdatedAt: Math.max(createdAt, startedAt ?? 0, finishedAt ?? 0, updatedAt ?? 0),
    ...(sessionId !== undefined && { sessionId }),
    ...(mapping.prompt && text(row[mapping.prompt]) !== undefined && { prompt: text(row[mapping.prompt]) }),
    ...(mapping.output && text(row[mapping.output]) !== undefined && { output: text(row[mapping.output]) }),
    ...(mapped === undefined ? { error: problems[0] } : mapping.error && text(row[mapping.error]) !== undefined && { error: text(row[mapping.error]) }),
  };
  const since = startedAt ?? created;
  const judged = judge(row, mapping, state, since ?? null, stuckAfterMs, now);
  return { request, stuck: judged.stuck, note: [...problems, ...(judged.note ? [judged.note] : [])].join("; ") || null };
}

/**
 * The stale-job rules of a queue that keeps a folder per job, for a processing job: a done marker means a result waits to be
 * recovered; a live pid (its column, or the pid file) means leave it, until it has run past
 * stuckAfter (a pid can be reused); no marker and no live pid means stale.
 */
function judge(
  row: Record<string, unknown>,
  mapping: TableMapping,
  state: State,
  since: number | null,
  stuckAfterMs: number,
  now: number,
): { stuck: string | null; note: string | null } {
  if (state !== "processing") return { stuck: null, note: null };
  const ran = since === null ? "since a time that cannot be read" : formatDuration(Math.max(0, now - since));
  const dir = mapping.markers ? jobDir(row[mapping.markers.payload], mapping.markers.key) : null;
  // Markers configured, but this job's payload names no folder: say so rather than judge without them.
  const unmarked =
    mapping.markers && dir === null ? `its ${mapping.markers.payload} has no ${JSON.stringify(mapping.markers.key)}: no marker could be checked` : null;
  const marker = (template: string | undefined) => (dir && template ? path.resolve(path.dirname(mapping.database), template.replaceAll("{dir}", dir)) : null);
  const done = marker(mapping.markers?.done);
  if (done && fs.existsSync(done)) return { stuck: `processing ${ran}; its done marker ${done} exists: a result waits to be recovered`, note: null };
  const pidFile = marker(mapping.markers?.pid);
  const columnPid = mapping.pid && typeof row[mapping.pid] === "number" ? (row[mapping.pid] as number) : null;
  const fromFile = columnPid === null && pidFile ? readPidFile(pidFile) : { pid: null, problem: null };
  const pid = columnPid ?? fromFile.pid;
  const note = [unmarked, fromFile.problem].filter(Boolean).join("; ") || null;
  const past = since !== null && now - since > stuckAfterMs;
  if (pid !== null && pidExists(pid)) {
    return past
      ? { stuck: `processing ${ran}, past ${formatDuration(stuckAfterMs)}; pid ${pid} runs, but a pid can be reused`, note }
      : { stuck: null, note: [`worker pid ${pid} runs`, note].filter(Boolean).join("; ") };
  }
  if (pid !== null) return { stuck: `processing ${ran}; worker pid ${pid} is gone and no done marker`, note };
  if (past)
    return {
      stuck: `processing ${ran}, past ${formatDuration(stuckAfterMs)}, with no done marker${mapping.markers?.pid || mapping.pid ? " and no pid" : ""}`,
      note,
    };
  return { stuck: null, note };
}
