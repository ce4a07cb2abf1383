/**
 * The `otel` source's rows: the lifecycles' table and the expressions the source machinery
 * (lib/sources/sourceQueue.ts) builds its listings, filters and pages from; `t` is the lifecycle.
 */
export const LIFECYCLE_ROWS = {
  table: "lifecycles",
  from: "lifecycles t",
  select:
    "t.kind, t.state, t.started_at, t.queued_at, t.processing_at, t.finished_at, t.last_at, t.received_at, t.prompt, t.output, t.error, t.model, t.attempt, t.last_step, t.calls, t.tools, t.input_tokens, t.output_tokens, t.cache_read_tokens, t.cache_write_tokens, t.cost_usd, t.estimated_calls, t.unpriced_calls, t.trace_id, t.waiting_on, t.abandoned_by, t.abandoned_at",
  id: "t.seq",
  status: "t.state",
  created: "t.started_at",
  times: ["t.received_at"],
  workspace: "coalesce(reqwatch_name(t.service, 64), 'otel')",
  session: "reqwatch_name(t.session, 128)",
  text: ["t.prompt", "t.output", "t.error", "t.last_step", "t.model"],
  /** What the stuck rule reads of a row. */
  facts: "t.kind, t.state, t.started_at, t.last_at, t.received_at, t.last_step, t.attempt, t.error, t.waiting_on, t.abandoned_by, t.abandoned_at",
} as const;
