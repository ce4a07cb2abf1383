import type { State } from "../model/states";
import type { RequestRecord } from "../model/requestFormat";
import path from "node:path";
import { inspectClaudeMem } from "../sources/claudeMem";
import { claudeMemWorkerAddress } from "../sources/workerAddress";
import { workerStatus, type WorkerStatus } from "../sources/workerClient";
import type { Listing } from "../sources/queueLook";
import type { SourceRead } from "../sources/sourceMessage";
import type { SourceSpec } from "../sources/sourceSpec";
import { inspectTable, readTableMapping } from "../sources/sqliteTable";
import { inspectTelemetry } from "../sources/telemetryQueue";

/** Another program's queue as `reqwatch source` and the MCP tool show it. */
interface SourceView {
  source: {
    kind: SourceSpec["kind"];
    /** The database read. */
    file: string;
    /** The mapping file, for a sqlite source. */
    mapping: string | null;
    table: string;
    /** For claude-mem: the release range whose schema the table matches best. */
    generation: string | null;
    /** For claude-mem: whether claude-mem no longer processes the table. */
    retired: boolean;
    columns: string[];
    lastWriteAt: number | null;
  };
  counts: Record<State, number>;
  /** How many are stuck, and how many messages there are in all. */
  stuck: number;
  total: number;
  /** The stuck messages (or every one, with `all`), up to `limit`, newest first. */
  messages: (RequestRecord & { stuckReason: string | null; note: string | null })[];
  /** How many more there are than `messages` lists (`reqwatch list --source` pages through them all). */
  more: number;
}

/** What `reqwatch source` and the MCP tool say: the view, and claude-mem 13's worker, which keeps its queue in memory (what it said when asked, or why it could not be). */
interface SourceReport extends SourceView {
  worker: WorkerStatus | null;
}

function read(spec: SourceSpec, listing: Listing, now: number): SourceRead & { source: SourceView["source"] } {
  if (spec.kind === "sqlite") {
    const mapping = readTableMapping(spec.mapping);
    const { columns, ...read } = inspectTable(mapping, now, listing);
    return {
      ...read,
      source: {
        kind: "sqlite",
        file: mapping.database,
        mapping: spec.mapping,
        table: mapping.table,
        generation: null,
        retired: false,
        columns,
        lastWriteAt: read.lastWriteAt,
      },
    };
  }
  if (spec.kind === "otel") {
    const read = inspectTelemetry(spec.file, spec.stuckAfterMs, now, listing);
    return {
      ...read,
      source: {
        kind: "otel",
        file: spec.file,
        mapping: null,
        table: "lifecycles",
        generation: null,
        retired: false,
        columns: [],
        lastWriteAt: read.lastWriteAt,
      },
    };
  }
  const { file, shape, ...read } = inspectClaudeMem(spec.file, now, listing);
  return {
    ...read,
    source: {
      kind: "claude-mem",
      file,
      mapping: null,
      table: "pending_messages",
      generation: shape.generation,
      retired: shape.retired,
      columns: [...shape.columns].sort(),
      lastWriteAt: read.lastWriteAt,
    },
  };
}

/** The worker of a claude-mem whose table is retired, asked once. */
async function worker(source: SourceView["source"]): Promise<WorkerStatus | null> {
  if (source.kind !== "claude-mem" || !source.retired) return null;
  return workerStatus(claudeMemWorkerAddress(path.dirname(source.file)));
}

/** The view, and the worker of a claude-mem from v13.4.0, asked now. */
export async function sourceReport(spec: SourceSpec, options: { all?: boolean; limit: number }, now = Date.now()): Promise<SourceReport> {
  const view = sourceView(spec, options, now);
  return { ...view, worker: await worker(view.source) };
}

/** The counts over every row; the stuck rows, or with `all` the newest, up to `limit` (only those are read with their text). */
export function sourceView(spec: SourceSpec, options: { all?: boolean; limit: number }, now = Date.now()): SourceView {
  const { source, counts, total, stuck, stuckMessages, messages } = read(
    spec,
    options.all ? { newest: options.limit } : { newest: 0, stuck: options.limit },
    now,
  );
  const listed = options.all ? messages : stuckMessages;
  return {
    source,
    counts,
    stuck,
    total,
    messages: listed.map(({ request, stuck: reason, note }) => ({ ...request, stuckReason: reason, note })),
    more: (options.all ? total : stuck) - listed.length,
  };
}
