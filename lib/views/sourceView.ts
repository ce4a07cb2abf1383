import { STATES, type State } from "../model/states";
import type { RequestRecord } from "../model/requestFormat";
import { inspectClaudeMem } from "../sources/claudeMem";
import type { SourceSpec } from "../sources/sourceSpec";

/** Another program's queue as `reqwatch source` and the MCP tool show it. */
export interface SourceView {
  source: { kind: SourceSpec["kind"]; file: string; generation: string; retired: boolean; columns: string[]; lastWriteAt: number | null };
  counts: Record<State, number>;
  /** How many are stuck, and how many messages there are in all. */
  stuck: number;
  total: number;
  /** The stuck messages (or every one, with `all`), up to `limit`, newest first. */
  messages: (RequestRecord & { stuckReason: string | null; note: string | null })[];
}

export function sourceView(spec: SourceSpec, options: { all?: boolean; limit: number }, now = Date.now()): SourceView {
  const { file, shape, messages, lastWriteAt } = inspectClaudeMem(spec.file, now);
  const counts = Object.fromEntries(STATES.map((state) => [state, 0])) as Record<State, number>;
  for (const { request } of messages) counts[request.state]++;
  const stuck = messages.filter((message) => message.stuck !== null);
  return {
    source: { kind: spec.kind, file, generation: shape.generation, retired: shape.retired, columns: [...shape.columns].sort(), lastWriteAt },
    counts,
    stuck: stuck.length,
    total: messages.length,
    messages: (options.all ? messages : stuck).slice(0, options.limit).map(({ request, stuck: reason, note }) => ({ ...request, stuckReason: reason, note })),
  };
}
