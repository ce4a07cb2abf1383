import type { RequestRecord } from "../model/requestFormat";
import { STATES, type State } from "../model/states";

/** One message or job of another program's queue, as reqwatch sees it. */
export interface SourceMessage {
  request: RequestRecord;
  /** Why it is stuck, by its owner's own rules; null when it is not. */
  stuck: string | null;
  /** Something worth knowing that is not stuck (a failure at the retry limit, a worker that runs). */
  note: string | null;
}

/** What a read of a source gives: its counts over every row, its live rows, and the newest rows asked for. */
export interface SourceRead {
  counts: Record<State, number>;
  total: number;
  /** The newest time in the table, or null when it is empty. */
  lastWriteAt: number | null;
  /** The rows that can be stuck (waiting or running), newest first. */
  live: SourceMessage[];
  /** The newest rows, as many as asked for. */
  messages: SourceMessage[];
}

export function emptyCounts(): Record<State, number> {
  return Object.fromEntries(STATES.map((state) => [state, 0])) as Record<State, number>;
}
