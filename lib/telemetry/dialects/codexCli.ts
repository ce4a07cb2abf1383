import { booleanAttr, numberAttr, stringAttr, type Attributes, type LogRecord, type SpanRecord } from "../records";
import type { Facts, LifecycleChange, PartFields, Step } from "../mapping/changes";
import type { Dialect } from "./dialect";
import { join, ms, said, spanStep } from "./stepText";

/**
 * OpenAI's Codex CLI (what 0.171.0 exports with an `[otel]` section in its config.toml;
 * tests/fixtures/otlp/codex-0.171.0) as one lifecycle per prompt turn. Each turn is a trace of its
 * own (rooted at the app server's `turn/start`); its log events (scope `codex_otel.log_only`, named
 * by their `event.name` attribute: the record's own event name is a source line) carry that trace's
 * id and the conversation's id, so a turn is named by `trace:<id>` and its session is the
 * conversation (a `codex exec resume` continues it). Its spans (the Rust tracing crate's, each with
 * the `code.module.name` of a codex crate) are hundreds a turn; a few tell of it: `session_task.turn`
 * (the turn, start to end), `handle_responses` with `gen_ai.usage.*` (a model's answer and its
 * tokens), `handle_response_stream_error`, the tool's own span (`codex.tool.phase`). The HTTP
 * attempts of a model call are `codex.api_request` events with their status and attempt (from 0).
 */
const CODEX_LOGS = "codex_otel.log_only";
/** The service.name `codex exec` gives itself; the interactive CLI and the IDEs have their own. */
export const CODEX_SERVICE = "codex_exec";

const isCodexLog = (scope: string) => scope === CODEX_LOGS || scope.startsWith("codex_otel::");
const isCodexSpan = (span: SpanRecord) => /^codex_[a-z_]+(::|$)/.test(stringAttr(span.attributes, "code.module.name") ?? "");

export const codexCli: Dialect = {
  name: "codex-cli",
  recognises: (record) => (record.signal === "log" ? isCodexLog(record.origin.scope.name) : record.signal === "span" && isCodexSpan(record)),
  map: (record) => (record.signal === "span" ? codexSpan(record) : record.signal === "log" ? codexLog(record) : null),
  // Its spans but the few read only time its inner work; of its log events, those that tell of no turn.
  knows: (record) => record.signal === "span" || (record.signal === "log" && UNSHOWN_EVENTS.has(stringAttr(record.attributes, "event.name") ?? "")),
};

/** Codex's log events that tell of no turn: a conversation starting, its startup's phases, the streamed events (which carry no trace), the time to the first token. */
const UNSHOWN_EVENTS = new Set(["codex.conversation_starts", "codex.startup_phase", "codex.sse_event", "codex.turn_ttft"]);

const service = (resource: Attributes) => stringAttr(resource, "service.name") ?? CODEX_SERVICE;

/** A log event of Codex's as a change to its turn; null for one that is not about a turn (a conversation starting, a streamed event, which carries no trace even when the others do) (counted as unmapped). */
function codexLog(log: LogRecord): LifecycleChange | null {
  const a = log.attributes;
  const name = (stringAttr(a, "event.name") ?? "").replace(/^codex\./, "");
  const session = stringAttr(a, "conversation.id");
  // Without a trace exporter Codex's log events carry no trace, and none a turn's id: the conversation is then the one lifecycle they name.
  const lifecycle = log.traceId ? `trace:${log.traceId}` : session ? `conversation:${session}` : null;
  if (!lifecycle || !Object.hasOwn(EVENTS, name)) return null;
  const model = stringAttr(a, "model");
  const durationMs = numberAttr(a, "duration_ms");
  const step = (key: string, summary: string, detail: Record<string, unknown>): Step => ({
    key: `log:${lifecycle}:${log.spanId ?? log.atMs}:${name}:${key}`,
    at: log.atMs,
    ...(durationMs !== undefined && { startAt: log.atMs - durationMs }),
    ...(log.spanId && { parentKey: `span:${log.spanId}` }),
    name,
    summary,
    detail: said(detail),
  });
  const { facts, made } = EVENTS[name as keyof typeof EVENTS]({ a, atMs: log.atMs, traceId: log.traceId, session, model, durationMs, step });
  // Its prompt, in a turn its traces name: the turn its files tell of too, once its span names it (by `turn:<id>`), or, should that never come (a run killed, or exited on an error), by when the prompt was sent.
  const sent = name === "user_prompt" && log.traceId && session ? { promptSent: { by: "telemetry" as const, session, at: log.atMs } } : {};
  return {
    kind: "turn",
    keys: [lifecycle],
    service: service(log.origin.resource),
    ...(session && { session }),
    ...(log.traceId && { traceId: log.traceId }),
    ...sent,
    step: made,
    facts,
  };
}

/** A log event as its mapping reads it: its attributes, time, trace, conversation, model and duration, and how its step is made. */
interface EventRead {
  a: Attributes;
  atMs: number;
  traceId: string | null;
  session: string | undefined;
  model: string | undefined;
  durationMs: number | undefined;
  step: (key: string, summary: string, detail: Record<string, unknown>) => Step;
}

/** What an event changes, and the step it is seen as. */
interface Mapped {
  facts: Facts;
  made: Step;
}

/** A prompt: the turn begins. */
function userPrompt({ a, atMs, model, step }: EventRead): Mapped {
  const prompt = stringAttr(a, "prompt");
  const facts: Facts = { startedAt: atMs, processingAt: atMs, ...(prompt !== undefined && { prompt }), ...(model && { model }) };
  const made = step(
    String(atMs),
    prompt === undefined
      ? `a prompt of ${numberAttr(a, "prompt_length") ?? "?"} characters (its text is exported with log_user_prompt = true)`
      : `a prompt of ${prompt.length} characters`,
    { prompt_length: numberAttr(a, "prompt_length"), model },
  );
  return { facts, made };
}

/** An attempt of a model call: answered, or failed. */
function apiRequest({ a, atMs, traceId, session, model, durationMs, step }: EventRead): Mapped {
  // Codex counts its attempts from 0; a person, and Claude Code, from 1.
  const attempt = (numberAttr(a, "attempt") ?? 0) + 1;
  const status = numberAttr(a, "http.response.status_code");
  const failed = stringAttr(a, "error.message") !== undefined || status === undefined || status >= 400;
  const error = failed ? join(status !== undefined && String(status), stringAttr(a, "error.message")) || "failed" : undefined;
  // Without its traces (a config with only `exporter`), a 200 is the last sign of a turn's answer: it completes it until anything later arrives.
  const facts: Facts = {
    processingAt: durationMs === undefined ? atMs : atMs - durationMs,
    attempt,
    ...(model && { model }),
    ...(failed ? { error } : { succeeded: true, answeredAt: atMs }),
  };
  // With traces, a call is its answer's span (handle_responses, with the tokens); without, the attempt that was answered.
  if (!traceId && !failed)
    facts.part = {
      kind: "call",
      id: `${session}:${atMs}`,
      at: atMs,
      fields: { ...(model && { model }), ...(durationMs !== undefined && { durationMs }), attempt, success: true },
    };
  // With traces, the call's answer is a span of its own: a timeline draws each attempt in the bar of the answer that follows it (a turn makes one call at a time).
  const made = step(String(attempt), join(`attempt ${attempt}`, failed ? `failed: ${error}` : String(status), ms(durationMs), stringAttr(a, "endpoint")), {
    status_code: status,
    error: stringAttr(a, "error.message"),
    attempt,
    duration_ms: durationMs,
    endpoint: stringAttr(a, "endpoint"),
    model,
    ...(traceId && { attempt_of_next_answer: true }),
  });
  return { facts, made };
}

/** A tool use allowed or refused. */
function toolDecision({ a, atMs, step }: EventRead): Mapped {
  const tool = stringAttr(a, "tool_name");
  const facts: Facts = {};
  const made = step(
    stringAttr(a, "call_id") ?? String(atMs),
    join(tool, stringAttr(a, "decision"), stringAttr(a, "source") && `by ${stringAttr(a, "source")}`),
    { tool_name: tool, decision: stringAttr(a, "decision"), source: stringAttr(a, "source"), call_id: stringAttr(a, "call_id") },
  );
  return { facts, made };
}

/** A tool use's result. */
function toolResult({ a, atMs, durationMs, step }: EventRead): Mapped {
  const tool = stringAttr(a, "tool_name");
  const id = stringAttr(a, "call_id");
  const success = booleanAttr(a, "success");
  const output = stringAttr(a, "output");
  const error = success === false ? (output?.slice(0, 500) ?? "failed") : undefined;
  const fields: PartFields = {
    ...(tool && { name: tool }),
    ...(durationMs !== undefined && { durationMs }),
    ...(success !== undefined && { success }),
    ...(error && { error }),
  };
  const facts: Facts = id ? { part: { kind: "tool", id, at: atMs, fields } } : {};
  const made = step(
    id ?? String(atMs),
    join(tool, success === false ? "failed" : "ok", ms(durationMs), stringAttr(a, "arguments") && `args ${stringAttr(a, "arguments")!.slice(0, 200)}`),
    {
      tool_name: tool,
      call_id: id,
      success,
      duration_ms: durationMs,
      arguments: stringAttr(a, "arguments"),
      output: output?.slice(0, 2000),
      mcp_server: stringAttr(a, "mcp_server") || undefined,
    },
  );
  return { facts, made };
}

/** The log events that tell of a turn, each with its mapping. */
const EVENTS = {
  user_prompt: userPrompt,
  api_request: apiRequest,
  tool_decision: toolDecision,
  tool_result: toolResult,
};

/** The conversation a span says it is in: `conversation.id`, or the `thread.id` Codex gives its turn's span (the tracing layer's own `thread.id` is an OS thread's number). */
function sessionOf(a: Attributes): string | undefined {
  const thread = stringAttr(a, "thread.id");
  return stringAttr(a, "conversation.id") ?? stringAttr(a, "thread_id") ?? (thread && !/^\d+$/.test(thread) ? thread : undefined);
}

/** A span of Codex's as a change to its turn; null for the many that only time its inner work (counted as unmapped). */
function codexSpan(span: SpanRecord): LifecycleChange | null {
  const a = span.attributes;
  const failed = span.status.code === "error";
  const step = (name: string, summary: string, detail: Record<string, unknown> = {}): Step =>
    spanStep(
      span,
      name,
      summary,
      said({
        span: span.name,
        span_id: span.spanId,
        duration_ms: Math.round(span.endMs - span.startMs),
        ...(failed && { status: span.status.message || "error" }),
        ...detail,
      }),
    );
  const mapped = spanMapping(span, a)?.({ span, a, failed, model: stringAttr(a, "model"), step });
  if (!mapped) return null;
  const { facts, made } = mapped;
  const session = sessionOf(a);
  // The turn's span names the turn as Codex's own files do (`turn:<id>`): the two are one turn.
  const turn = span.name === "session_task.turn" ? stringAttr(a, "turn.id") : undefined;
  return {
    kind: "turn",
    keys: [`trace:${span.traceId}`, ...(turn ? [`turn:${turn}`] : [])],
    service: service(span.origin.resource),
    ...(session && { session }),
    traceId: span.traceId,
    step: made,
    facts,
  };
}

/** A span as its mapping reads it: the span, its attributes, whether it failed, its model, and how its step is made. */
interface SpanRead {
  span: SpanRecord;
  a: Attributes;
  failed: boolean;
  model: string | undefined;
  step: (name: string, summary: string, detail?: Record<string, unknown>) => Step;
}

/** The mapping of the spans that tell of a turn; undefined for the many that only time its inner work. */
function spanMapping(span: SpanRecord, a: Attributes): ((read: SpanRead) => Mapped) | undefined {
  if (span.name === "session_task.turn") return turnSpan;
  if (span.name === "handle_responses" && numberAttr(a, "gen_ai.usage.input_tokens") !== undefined) return answerSpan;
  if (span.name === "handle_response_stream_error") return streamErrorSpan;
  if (stringAttr(a, "codex.tool.phase") !== undefined && stringAttr(a, "call_id") !== undefined) return toolSpan;
  return undefined;
}

/** The turn ended: its outcome and its own sums. */
function turnSpan({ span, a, failed, model, step }: SpanRead): Mapped {
  const error = failed ? span.status.message || "the turn failed" : undefined;
  const facts: Facts = { startedAt: span.startMs, processingAt: span.startMs, endedAt: span.endMs, ...(failed && { failed, error }), ...(model && { model }) };
  const made = step("turn ended", join(`took ${ms(span.endMs - span.startMs)}`, failed && `failed: ${error}`), {
    turn_id: stringAttr(a, "turn.id"),
    model,
    ...turnUsage(a),
  });
  return { facts, made };
}

/** The model's answer completed, with what it used. */
function answerSpan({ span, a, failed, step }: SpanRead): Mapped {
  // The model's answer completed (response.completed), with what it used: OpenAI's input tokens include the cached ones, kept apart here as Claude Code's are.
  const input = numberAttr(a, "gen_ai.usage.input_tokens") ?? 0;
  const cached = numberAttr(a, "gen_ai.usage.cache_read.input_tokens") ?? 0;
  const fields: PartFields = {
    inputTokens: Math.max(0, input - cached),
    outputTokens: numberAttr(a, "gen_ai.usage.output_tokens") ?? 0,
    cacheReadTokens: cached,
    ...(numberAttr(a, "gen_ai.usage.cache_write.input_tokens") !== undefined && { cacheWriteTokens: numberAttr(a, "gen_ai.usage.cache_write.input_tokens") }),
    ...(numberAttr(a, "codex.usage.reasoning_output_tokens") !== undefined && { reasoningTokens: numberAttr(a, "codex.usage.reasoning_output_tokens") }),
    success: !failed,
    // The span names no model; its turn's span and prompt do, and a turn's calls are all of its model: priced at it.
    modelOfLifecycle: true,
    // Its files name the call by its response, which no span carries: paired in order (mapping/fold.ts `joinedParts`).
    toldBy: "telemetry",
  };
  // An answer: it ends the turn until anything later arrives, should the turn's own span be lost (Codex's exporter can drop the last spans when it shuts down mid-export).
  const facts: Facts = {
    ...(failed ? { error: span.status.message || "the answer failed" } : { succeeded: true, answeredAt: span.endMs }),
    part: { kind: "call", id: span.spanId, at: span.endMs, fields },
  };
  const made = step(
    "model call",
    join(
      `${fields.inputTokens} in / ${fields.outputTokens} out`,
      cached > 0 && `${cached} cached`,
      fields.reasoningTokens !== undefined && `${fields.reasoningTokens} reasoning`,
      failed && `failed: ${span.status.message || "error"}`,
    ),
    {
      input_tokens: input,
      cached_input_tokens: cached,
      output_tokens: fields.outputTokens,
      reasoning_output_tokens: fields.reasoningTokens,
      reasoning_effort: stringAttr(a, "codex.request.reasoning_effort"),
    },
  );
  return { facts, made };
}

/** The response stream failed: Codex then reconnects, or gives up when its stream retries are spent; the span does not say which. */
function streamErrorSpan({ a, step }: SpanRead): Mapped {
  const facts: Facts = {};
  const made = step("stream error", join("the response stream failed", stringAttr(a, "request") && `in ${stringAttr(a, "request")}`));
  return { facts, made };
}

/** A tool's use. */
function toolSpan({ span, a, failed, step }: SpanRead): Mapped {
  const tool = stringAttr(a, "tool_name") ?? span.name;
  const aborted = booleanAttr(a, "aborted") === true;
  const error = failed ? span.status.message || "failed" : aborted ? "aborted" : undefined;
  const facts: Facts = {
    part: {
      kind: "tool",
      id: stringAttr(a, "call_id")!,
      at: span.endMs,
      fields: { name: tool, durationMs: span.endMs - span.startMs, ...(error && { success: false, error }) },
    },
  };
  const made = step(
    `tool ${tool}`,
    join(error ? `failed: ${error}` : "done", ms(span.endMs - span.startMs), stringAttr(a, "tool_source") && `from ${stringAttr(a, "tool_source")}`),
    { tool_name: tool, call_id: stringAttr(a, "call_id"), tool_source: stringAttr(a, "tool_source") },
  );
  return { facts, made };
}

/** The turn's own sums, as its span says them (the calls' parts carry what the turn adds up). */
function turnUsage(a: Attributes): Record<string, number | undefined> {
  const usage = (key: string) => numberAttr(a, `codex.turn.token_usage.${key}`);
  return {
    input_tokens: usage("input_tokens"),
    cached_input_tokens: usage("cached_input_tokens"),
    output_tokens: usage("output_tokens"),
    reasoning_output_tokens: usage("reasoning_output_tokens"),
    total_tokens: usage("total_tokens"),
  };
}
