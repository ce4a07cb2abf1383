import { formatCost } from "../model/money";
import { formatSpan } from "./timelineView";

/** One fact of a received lifecycle, in words: `Took` `1.2 s`; a time also as its epoch `at`, for the page to show as it shows every date. */
export interface LifecycleFact {
  label: string;
  value: string;
  at?: number;
}

const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
const str = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * What the telemetry store keeps of a lifecycle (its `lifecycles` row) in words: times as times,
 * durations as durations, tokens and cost as the tables show them, and what it does not know left
 * out (no NULL). Its prompt and answer are on the page whole, under Content.
 */
export function lifecycleFacts(row: Record<string, unknown>): LifecycleFact[] {
  const facts: LifecycleFact[] = [];
  const add = (label: string, value: string | undefined | false) => {
    if (value) facts.push({ label, value });
  };
  const addTime = (label: string, column: string) => {
    const ms = num(row[column]);
    if (ms !== undefined) facts.push({ label, value: new Date(ms).toISOString(), at: ms });
  };
  const started = num(row.started_at);
  const finished = num(row.finished_at);
  const last = num(row.last_at);
  add("Kind", str(row.kind));
  add("Service", str(row.service));
  add("Session", str(row.session));
  add("Trace", str(row.trace_id));
  add("State", str(row.state));
  addTime("Started", "started_at");
  addTime("Queued", "queued_at");
  addTime("Worked on from", "processing_at");
  addTime("Finished", "finished_at");
  if (started !== undefined && finished !== undefined) add("Took", formatSpan(finished - started));
  else if (started !== undefined && last !== undefined && last > started) add("Last heard of", `${formatSpan(last - started)} after it started`);
  addTime("Last received", "received_at");
  add("Model", str(row.model));
  const attempt = num(row.attempt);
  add("Attempts", attempt !== undefined && attempt > 1 && String(attempt));
  const calls = num(row.calls) ?? 0;
  const tools = num(row.tools) ?? 0;
  add("Model calls", calls > 0 && String(calls));
  add("Tool uses", tools > 0 && String(tools));
  const input = num(row.input_tokens) ?? 0;
  const output = num(row.output_tokens) ?? 0;
  const cacheRead = num(row.cache_read_tokens) ?? 0;
  const cacheWrite = num(row.cache_write_tokens) ?? 0;
  add(
    "Tokens",
    input + output + cacheRead + cacheWrite > 0 &&
      `${input.toLocaleString("en-US")} in / ${output.toLocaleString("en-US")} out (cache read ${cacheRead.toLocaleString("en-US")}, cache write ${cacheWrite.toLocaleString("en-US")})`,
  );
  // As the requests table says it: estimated at list prices where the client sent none, unknown where no price is known.
  add(
    "Cost",
    calls > 0 &&
      formatCost({ calls, costUsd: num(row.cost_usd) ?? 0, estimatedCalls: num(row.estimated_calls) ?? 0, unpricedCalls: num(row.unpriced_calls) ?? 0 }),
  );
  add("Error", str(row.error));
  add("Last step", str(row.last_step));
  return facts;
}
