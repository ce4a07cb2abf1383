import type { RequestRecord } from "../model/requestFormat";
import { STATES, type State } from "../model/states";

/** One message or job of another program's queue, as reqwatch sees it. */
export interface SourceMessage {
  request: RequestRecord;
  /** Why it is stuck, by its owner's own rules; null when it is not. */
  stuck: string | null;
  /** Something worth knowing that is not stuck (a failure at the retry limit, a worker that runs). */
  note: string | null;
  /** The row as its owner stores it, each column reqwatch reads (one row's read only: lib/sources/sourceQueue.ts readOne). */
  stored?: Record<string, unknown>;
  /** `stored` is reqwatch's own record of what it saw, not the owner's row. */
  keptByReqwatch?: boolean;
  /** What it went through, oldest first, where the source keeps that (one row's read only). */
  steps?: SourceStep[];
  /** Its model calls and tool uses, each once, merged from every record that told of it (the received telemetry's; one row's read only). */
  parts?: SourcePart[];
}

/** Why a row is stuck, put in words only when asked (a look counts thousands and shows none); null when it is not stuck. */
export type StuckReason = (() => string) | null;

/** One step of a row's history as its source keeps it: a model call, a tool use, an error. */
export interface SourceStep {
  /** Its key among its lifecycle's steps, where the source has one (the received telemetry's). */
  key?: string;
  at: number;
  /** When it began, where it took time; `at` is then when it ended. */
  startAt?: number;
  /** The key of the step it happened inside. */
  parentKey?: string;
  /** The call or tool use it told of (`call <id>`, `tool <id>`: a SourcePart's kind and id), where the source knows. */
  partKey?: string;
  name: string;
  summary: string;
  detail: Record<string, unknown>;
  /** The error it tells of, where the source says one (a failed call, a give-up, a span's error status). */
  error?: string;
}

/** One model call or tool use of a lifecycle, as what each record said of it adds up (lib/telemetry/mapping/changes.ts Part). */
export interface SourcePart {
  kind: "call" | "tool";
  /** Its own id: a call's request id, a tool's use id. */
  id: string;
  at: number;
  fields: Record<string, unknown>;
}

/** What a read of a source gives: its counts over every row, how many are stuck, and the rows asked for. */
export interface SourceRead {
  counts: Record<State, number>;
  total: number;
  /** The newest time in the table, or null when it is empty. */
  lastWriteAt: number | null;
  /** How many rows are stuck. */
  stuck: number;
  /** The newest stuck rows, as many as asked for. */
  stuckMessages: SourceMessage[];
  /** The newest rows, as many as asked for. */
  messages: SourceMessage[];
}

export function emptyCounts(): Record<State, number> {
  return Object.fromEntries(STATES.map((state) => [state, 0])) as Record<State, number>;
}
