import { formatUsd } from "../../model/money";
import { booleanAttr, numberAttr, stringAttr, type Attributes, type LogRecord, type SpanRecord } from "../records";
import type { Facts, LifecycleChange, PartFields, Step } from "../mapping/changes";
import type { Dialect } from "./dialect";
import { join, ms, said, spanStep } from "./stepText";

/**
 * Claude Code's telemetry (its monitoring docs; what 2.1.332 exports, tests/fixtures/otlp) as one
 * lifecycle per prompt turn. Its log events (scope com.anthropic.claude_code.events) carry the
 * turn's `prompt.id`, its session and a sequence number; its spans (com.anthropic.claude_code.tracing,
 * with the enhanced telemetry beta) carry no prompt id, but each turn is a trace of its own whose
 * root is `claude_code.interaction`, and the log events carry that trace's id. So a turn is named by
 * `prompt:<id>` and `trace:<id>`, whichever arrives first. A model call is named by its request id
 * (the `api_request` event and the `claude_code.llm_request` span both carry it), a tool use by its
 * `tool_use_id`. No log event marks a turn's end: the interaction span does, and without spans the
 * final `assistant_response` stands for it until anything later arrives.
 */
const CLAUDE_CODE_LOGS = "com.anthropic.claude_code.events";
const CLAUDE_CODE_SPANS = "com.anthropic.claude_code.tracing";

/** Claude Code's records, by the scopes it names them with. */
export const claudeCode: Dialect = {
  name: "claude-code",
  recognises: (record) => record.signal !== "metric" && (record.origin.scope.name === CLAUDE_CODE_LOGS || record.origin.scope.name === CLAUDE_CODE_SPANS),
  map: (record) => (record.signal === "span" ? claudeCodeSpan(record) : record.signal === "log" ? claudeCodeLog(record) : null),
};

/** The service.name Claude Code gives itself; its turns are its own whatever the name. */
export const CLAUDE_CODE_SERVICE = "claude-code";

const service = (attributes: Attributes) => stringAttr(attributes, "service.name") ?? CLAUDE_CODE_SERVICE;
const usd = (value: number | undefined) => (value === undefined ? "" : formatUsd(value));

/** A log event of Claude Code's as a change to its turn; null for one that is not about a turn (it is counted as unmapped). */
function claudeCodeLog(log: LogRecord): LifecycleChange | null {
  const a = log.attributes;
  const promptId = stringAttr(a, "prompt.id");
  const name = (log.eventName ?? "").replace(/^claude_code\./, "");
  if (!Object.hasOwn(EVENTS, name)) return null;
  const session = stringAttr(a, "session.id");
  const sequence = numberAttr(a, "event.sequence");
  const keys = turnKeys(log, name, promptId, session, sequence);
  if (!keys.length) return null;
  const step = (summary: string, detail: Record<string, unknown> = {}): Step => ({
    key: sequence !== undefined && session ? `log:${session}:${sequence}` : `log:${promptId ?? keys[0]}:${name}:${log.atMs}`,
    at: log.atMs,
    name,
    summary,
    detail: said(detail),
  });
  const read: EventRead = {
    a,
    atMs: log.atMs,
    requestId: stringAttr(a, "request_id"),
    model: stringAttr(a, "model"),
    joinable: Boolean(promptId || log.traceId),
    step,
  };
  const { facts, made } = EVENTS[name as keyof typeof EVENTS](read);
  const agent = stringAttr(a, "agent_id");
  if (agent) return { kind: "agent", keys: [subagentKey(agent)], service: service(log.origin.resource), ...(session && { session }), step: made, facts };
  return {
    kind: "turn",
    keys,
    service: service(log.origin.resource),
    ...(session && { session }),
    ...(log.traceId && { traceId: log.traceId }),
    step: made,
    facts,
  };
}

/** A log event as its mapping reads it: its attributes, time, request id and model, and how its step is made. */
interface EventRead {
  a: Attributes;
  atMs: number;
  requestId: string | undefined;
  model: string | undefined;
  /** It names its turn by a prompt id or a trace, which the turn's other records carry too. */
  joinable: boolean;
  step: (summary: string, detail?: Record<string, unknown>) => Step;
}

/** What an event changes, and the step it is seen as. */
interface Mapped {
  facts: Facts;
  made: Step;
}

/** A prompt: the turn begins. */
function userPrompt({ a, atMs, joinable, step }: EventRead): Mapped {
  const prompt = stringAttr(a, "prompt");
  const facts: Facts = { startedAt: atMs, processingAt: atMs, ...(prompt !== undefined && { prompt }) };
  const unjoined = joinable ? "" : UNJOINED;
  const made = step(
    prompt === undefined
      ? `a prompt of ${numberAttr(a, "prompt_length") ?? "?"} characters (its text is exported with OTEL_LOG_USER_PROMPTS=1)${unjoined}`
      : `a prompt of ${prompt.length} characters${unjoined}`,
  );
  return { facts, made };
}

/** A model call that succeeded: its tokens, cost and duration. */
function apiRequest({ a, atMs, requestId, model, step }: EventRead): Mapped {
  const fields = callFields(a);
  const durationMs = numberAttr(a, "duration_ms");
  const facts: Facts = {
    processingAt: durationMs === undefined ? atMs : atMs - durationMs,
    succeeded: true,
    ...(model && { model }),
    ...(requestId && { part: { kind: "call", id: requestId, at: atMs, fields: { ...fields, success: true } } }),
  };
  const made = step(
    join(
      model,
      `${fields.inputTokens ?? 0} in / ${fields.outputTokens ?? 0} out`,
      usd(fields.costUsd),
      ms(durationMs),
      fields.ttftMs !== undefined && `first token ${ms(fields.ttftMs)}`,
    ),
    {
      model,
      request_id: requestId,
      input_tokens: fields.inputTokens,
      output_tokens: fields.outputTokens,
      cache_read_tokens: fields.cacheReadTokens,
      cache_creation_tokens: fields.cacheWriteTokens,
      cost_usd: fields.costUsd,
      duration_ms: durationMs,
      ttft_ms: fields.ttftMs,
    },
  );
  if (durationMs !== undefined) made.startAt = atMs - durationMs;
  return { facts, made };
}

/** A failed attempt of a model call. */
function apiError({ a, atMs, requestId, model, step }: EventRead): Mapped {
  const status = numberAttr(a, "status_code");
  const attempt = numberAttr(a, "attempt");
  const error = join(status !== undefined && String(status), stringAttr(a, "error"));
  const facts: Facts = {
    error,
    ...(attempt !== undefined && { attempt }),
    ...(requestId && {
      part: {
        kind: "call",
        id: requestId,
        at: atMs,
        fields: { ...(model && { model }), ...(attempt !== undefined && { attempt }), success: false, error },
      },
    }),
  };
  const made = step(join(error, attempt !== undefined && `attempt ${attempt}`), {
    status_code: status,
    error: stringAttr(a, "error"),
    attempt,
    request_id: requestId,
    model,
  });
  return { facts, made };
}

/** A model call given up after its retries: the turn failed. */
function retriesExhausted({ a, model, step }: EventRead): Mapped {
  const attempts = numberAttr(a, "total_attempts");
  const error = join(numberAttr(a, "status_code") !== undefined && String(numberAttr(a, "status_code")), stringAttr(a, "error"));
  const facts: Facts = {
    exhausted: true,
    error: `${error || "failed"}${attempts !== undefined ? ` after ${attempts} attempts` : ""}`,
    ...(attempts !== undefined && { attempt: attempts }),
  };
  const made = step(facts.error!, { total_attempts: attempts, total_retry_duration_ms: numberAttr(a, "total_retry_duration_ms"), model });
  return { facts, made };
}

/** The answer. */
function assistantResponse({ a, atMs, requestId, model, step }: EventRead): Mapped {
  const response = stringAttr(a, "response");
  const facts: Facts = { answeredAt: atMs, ...(response !== undefined && { output: response }), ...(model && { model }) };
  const made = step(`an answer of ${response?.length ?? numberAttr(a, "response_length") ?? "?"} characters`, { request_id: requestId, model });
  return { facts, made };
}

/** A tool use allowed or refused. */
function toolDecision({ a, step }: EventRead): Mapped {
  const tool = stringAttr(a, "tool_name");
  const made = step(join(tool, stringAttr(a, "decision"), stringAttr(a, "source") && `by ${stringAttr(a, "source")}`), {
    tool_name: tool,
    decision: stringAttr(a, "decision"),
    source: stringAttr(a, "source"),
    tool_use_id: stringAttr(a, "tool_use_id"),
    tool_parameters: stringAttr(a, "tool_parameters"),
  });
  const facts: Facts = {};
  return { facts, made };
}

/** A tool use's result. */
function toolResult({ a, atMs, step }: EventRead): Mapped {
  const tool = stringAttr(a, "tool_name");
  const id = stringAttr(a, "tool_use_id");
  const success = booleanAttr(a, "success");
  const durationMs = numberAttr(a, "duration_ms");
  const error = success === false ? (stringAttr(a, "error") ?? "failed") : undefined;
  const facts: Facts = id
    ? {
        part: {
          kind: "tool",
          id,
          at: atMs,
          fields: {
            ...(tool && { name: tool }),
            ...(durationMs !== undefined && { durationMs }),
            ...(success !== undefined && { success }),
            ...(error && { error }),
          },
        },
      }
    : {};
  const made = step(join(tool, success === false ? `failed${error && error !== "failed" ? `: ${error}` : ""}` : "ok", ms(durationMs)), {
    tool_name: tool,
    tool_use_id: id,
    success,
    duration_ms: durationMs,
    tool_input: stringAttr(a, "tool_input"),
    error,
  });
  if (durationMs !== undefined) made.startAt = atMs - durationMs;
  return { facts, made };
}

/** The log events that tell of a turn, each with its mapping. Any other (a plugin loaded, a retention sweep) is counted as unmapped. */
const EVENTS = {
  user_prompt: userPrompt,
  api_request: apiRequest,
  api_error: apiError,
  api_retries_exhausted: retriesExhausted,
  assistant_response: assistantResponse,
  tool_decision: toolDecision,
  tool_result: toolResult,
};

/**
 * The names of a log event's turn: its prompt id and its trace. Claude Code leaves `prompt.id` off
 * some prompts (ones it makes itself, a prompt typed before its context has an id): such a prompt is
 * still a turn, named by its message's uuid (else its place in the session), and the events after it
 * join it through its trace when they share one. Any other event with neither is no turn's (unmapped).
 */
function turnKeys(log: LogRecord, name: string, promptId: string | undefined, session: string | undefined, sequence: number | undefined): string[] {
  const keys = [...(promptId ? [`prompt:${promptId}`] : []), ...(log.traceId ? [`trace:${log.traceId}`] : [])];
  if (promptId || name !== "user_prompt") return keys;
  const message = stringAttr(log.attributes, "message.uuid");
  return [message ? `message:${message}` : `unnamed:${session ?? "?"}:${sequence ?? log.atMs}`, ...keys];
}

/** Said of a prompt sent with neither its prompt.id nor a trace: why nothing after it shows on its page (and why it may read as stuck). */
const UNJOINED =
  "; sent without its prompt.id or a trace, so the events after it cannot be told apart from other prompts' and are counted on Health as unmapped";

/**
 * A subagent's run, as Claude Code's own files name it (`subagent:<agentId>`, ../agentFiles/claudeCodeFiles.ts):
 * its calls and tools (their records carry its `agent_id`) are its own, not its turn's, so a session
 * read both ways counts each once, in the subagent's run.
 */
export const subagentKey = (agentId: string) => `subagent:${agentId}`;

function callFields(a: Attributes): PartFields {
  const fields: PartFields = {};
  const set = <K extends keyof PartFields>(key: K, value: PartFields[K] | undefined) => {
    if (value !== undefined) fields[key] = value;
  };
  set("model", stringAttr(a, "model") ?? stringAttr(a, "gen_ai.request.model"));
  set("inputTokens", numberAttr(a, "input_tokens") ?? numberAttr(a, "gen_ai.usage.input_tokens"));
  set("outputTokens", numberAttr(a, "output_tokens") ?? numberAttr(a, "gen_ai.usage.output_tokens"));
  set("cacheReadTokens", numberAttr(a, "cache_read_tokens") ?? numberAttr(a, "gen_ai.usage.cache_read.input_tokens"));
  set("cacheWriteTokens", numberAttr(a, "cache_creation_tokens") ?? numberAttr(a, "gen_ai.usage.cache_write.input_tokens"));
  set("costUsd", numberAttr(a, "cost_usd"));
  set("durationMs", numberAttr(a, "duration_ms"));
  set("ttftMs", numberAttr(a, "ttft_ms"));
  set("attempt", numberAttr(a, "attempt"));
  return fields;
}

/** A span of Claude Code's as a change to its turn; null for a span name it does not know (counted as unmapped). */
function claudeCodeSpan(span: SpanRecord): LifecycleChange[] | null {
  const a = span.attributes;
  const session = stringAttr(a, "session.id") ?? stringAttr(a, "gen_ai.conversation.id");
  const step = (name: string, summary: string): Step =>
    spanStep(span, name, summary, {
      span: span.name,
      span_id: span.spanId,
      duration_ms: Math.round(span.endMs - span.startMs),
      ...(span.status.code === "error" && { status: span.status.message || "error" }),
    });
  if (!Object.hasOwn(SPANS, span.name)) return null;
  const { facts, made, extra = [] } = SPANS[span.name as keyof typeof SPANS]({ span, a, step });
  const agent = stringAttr(a, "agent_id");
  const change = (step: Step, stepFacts: Facts): LifecycleChange =>
    agent
      ? { kind: "agent", keys: [subagentKey(agent)], service: service(span.origin.resource), ...(session && { session }), step, facts: stepFacts }
      : {
          kind: "turn",
          keys: [`trace:${span.traceId}`],
          service: service(span.origin.resource),
          ...(session && { session }),
          traceId: span.traceId,
          step,
          facts: stepFacts,
        };
  return [change(made, facts), ...extra.map((attemptStep) => change(attemptStep, {}))];
}

/** A span as its mapping reads it: the span, its attributes, and how its step is made. */
interface SpanRead {
  span: SpanRecord;
  a: Attributes;
  step: (name: string, summary: string) => Step;
}

/** What a span changes, the step it is seen as, and the steps inside it (a retried call's attempts). */
interface SpanMapped {
  facts: Facts;
  made: Step;
  extra?: Step[];
}

/** A turn, the root of its trace; an interaction inside one (a subagent's) is a step of it. */
function interactionSpan({ span, a, step }: SpanRead): SpanMapped {
  const prompt = stringAttr(a, "user_prompt");
  const failed = span.status.code === "error";
  // A turn is the root of its trace; an interaction inside one (a subagent's) is a step of it.
  if (span.parentSpanId) {
    return { facts: {}, made: step("inner turn", join(`took ${ms(span.endMs - span.startMs)}`, failed && `failed: ${span.status.message || "error"}`)) };
  }
  const facts: Facts = {
    startedAt: span.startMs,
    processingAt: span.startMs,
    endedAt: span.endMs,
    ...(failed && { failed, error: span.status.message || "the turn failed" }),
    ...(prompt !== undefined && { prompt }),
  };
  const made = step("turn ended", join(`took ${ms(span.endMs - span.startMs)}`, failed && `failed: ${span.status.message || "error"}`));
  return { facts, made };
}

/** A model call, with a step for each attempt of a retried one. */
function llmRequestSpan({ span, a, step }: SpanRead): SpanMapped {
  const fields = callFields(a);
  const success = booleanAttr(a, "success") ?? span.status.code !== "error";
  const requestId = stringAttr(a, "request_id") ?? stringAttr(a, "gen_ai.response.id") ?? `span-${span.spanId}`;
  const attempts = span.events.filter((event) => event.name === "gen_ai.request.attempt").length;
  const attempt = Math.max(fields.attempt ?? 0, attempts) || undefined;
  const error = success
    ? undefined
    : join(numberAttr(a, "status_code") !== undefined && String(numberAttr(a, "status_code")), stringAttr(a, "error") ?? span.status.message);
  // A subagent's run has no interaction span to end it: its call that answered (asked for no tool) does, as its file's answer does.
  const answered =
    success && stringAttr(a, "agent_id") !== undefined && stringAttr(a, "stop_reason") !== undefined && stringAttr(a, "stop_reason") !== "tool_use";
  const facts: Facts = {
    processingAt: span.startMs,
    ...(success && { succeeded: true }),
    ...(answered && { answeredAt: span.endMs }),
    ...(fields.model && { model: fields.model }),
    ...(attempt !== undefined && { attempt }),
    ...(error && { error }),
    part: {
      kind: "call",
      id: requestId,
      at: span.endMs,
      fields: { ...fields, ...(attempt !== undefined && { attempt }), success, ...(error && { error }) },
    },
  };
  const made = step(
    "model call",
    join(
      fields.model,
      success ? `${fields.inputTokens ?? 0} in / ${fields.outputTokens ?? 0} out` : `failed: ${error}`,
      ms(span.endMs - span.startMs),
      attempt !== undefined && attempt > 1 && `${attempt} attempts`,
      stringAttr(a, "stop_reason") && `stop: ${stringAttr(a, "stop_reason")}`,
    ),
  );
  made.detail = { ...made.detail, request_id: requestId, attempt, stop_reason: stringAttr(a, "stop_reason"), ...fields } as Step["detail"];
  const extra = attemptSteps(span, success ? undefined : error);
  return { facts, made, extra };
}

/** A tool's use. */
function toolSpan({ span, a, step }: SpanRead): SpanMapped {
  const tool = stringAttr(a, "tool_name") ?? stringAttr(a, "gen_ai.tool.name");
  const id = stringAttr(a, "tool_use_id") ?? `span-${span.spanId}`;
  const failed = span.status.code === "error";
  const facts: Facts = {
    part: {
      kind: "tool",
      id,
      at: span.endMs,
      fields: {
        ...(tool && { name: tool }),
        durationMs: span.endMs - span.startMs,
        ...(failed && { success: false, error: span.status.message || "failed" }),
      },
    },
  };
  const made = step(
    `tool ${tool ?? "?"}`,
    join(
      failed ? `failed: ${span.status.message || "error"}` : "done",
      ms(span.endMs - span.startMs),
      stringAttr(a, "full_command") && `$ ${stringAttr(a, "full_command")}`,
    ),
  );
  // The tool's use id, as its decision and result events carry it: the turn's page draws the three as one tool.
  made.detail = { ...made.detail, tool_use_id: id };
  return { facts, made };
}

/** A tool use waiting for the user's permission. */
function blockedOnUserSpan({ span, a, step }: SpanRead): SpanMapped {
  const facts: Facts = {};
  const made = step(
    "waited for permission",
    join(stringAttr(a, "decision"), stringAttr(a, "source") && `by ${stringAttr(a, "source")}`, ms(span.endMs - span.startMs)),
  );
  return { facts, made };
}

/** A tool running. */
function toolExecutionSpan({ span, a, step }: SpanRead): SpanMapped {
  const facts: Facts = {};
  const made = step("tool ran", join(booleanAttr(a, "success") === false ? "failed" : "ok", ms(span.endMs - span.startMs)));
  return { facts, made };
}

/** The spans that tell of a turn, each with its mapping; any other is counted as unmapped. */
const SPANS = {
  "claude_code.interaction": interactionSpan,
  "claude_code.llm_request": llmRequestSpan,
  "claude_code.tool": toolSpan,
  "claude_code.tool.blocked_on_user": blockedOnUserSpan,
  "claude_code.tool.execution": toolExecutionSpan,
};

/**
 * A retried model call's attempts, each a step inside the call's: Claude Code marks each with a
 * `gen_ai.request.attempt` event on its llm_request span, and nothing else of a retried attempt
 * (no log event, no status) when a later one succeeds. Each ran from its event to the next one's
 * (the last to the span's end); every one before the last failed, or it would not have been
 * retried. None for a call that was answered at its first attempt.
 */
function attemptSteps(span: SpanRecord, lastError: string | undefined): Step[] {
  const marks = span.events.filter((event) => event.name === "gen_ai.request.attempt").sort((x, y) => x.atMs - y.atMs);
  if (marks.length < 2) return [];
  return marks.map((mark, i) => {
    const number = numberAttr(mark.attributes, "attempt") ?? i + 1;
    const last = i === marks.length - 1;
    const endMs = last ? span.endMs : marks[i + 1]!.atMs;
    const outcome = !last ? "failed, retried (its status is not exported)" : lastError ? `failed: ${lastError}` : "answered";
    return {
      key: `span:${span.spanId}:attempt:${number}`,
      at: endMs,
      startAt: mark.atMs,
      parentKey: `span:${span.spanId}`,
      name: `attempt ${number}`,
      summary: join(outcome, ms(endMs - mark.atMs)),
      detail: { attempt: number, ...(!last || lastError ? { failed: true } : {}), ...(last && lastError && { error: lastError }) },
    };
  });
}
