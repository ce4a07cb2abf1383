import { numberAttr, stringAttr, type Attributes, type SpanRecord, type TelemetryRecord } from "../records";
import type { Facts, LifecycleChange, LifecycleKind, PartFields } from "../mapping/changes";
import type { Dialect } from "./dialect";
import { spanStep } from "./stepText";
import { spanOutcome, textList } from "./spanOutcome";
import { UNFINISHED_CALL } from "../mapping/stoppedCalls";

/**
 * Any instrumentation that follows OpenTelemetry's GenAI semantic conventions (the Anthropic SDK's
 * `anthropic.messages.create`, the AI SDK 7's `invoke_agent`/`step`/`chat`/`execute_tool`, ...), by
 * `gen_ai.operation.name`: an agent's run (`invoke_agent`, `create_agent`, `invoke_workflow`, the
 * AI SDK's and Mastra's `agent_step`, Mastra's `model_generation`) is one lifecycle, its model calls (`chat`, `text_completion`,
 * `generate_content`, `embeddings`) its calls and its tools (`execute_tool`, `retrieval`) its tools;
 * a call with no such parent is a lifecycle of its own. In its conversation (`gen_ai.conversation.id`,
 * else `session.id`, else its trace). The previous conventions' names are read too (`gen_ai.system`,
 * `gen_ai.usage.prompt_tokens`/`completion_tokens`).
 */
export type SpanRole = "run" | "call" | "tool";

const GEN_AI_OPERATIONS: Readonly<Record<string, SpanRole>> = {
  invoke_agent: "run",
  create_agent: "run",
  invoke_workflow: "run",
  agent_step: "run",
  // Mastra's: the model's whole generation, holding its steps.
  model_generation: "run",
  chat: "call",
  text_completion: "call",
  generate_content: "call",
  embeddings: "call",
  execute_tool: "tool",
  retrieval: "tool",
};

/** Operations known and shown as no lifecycle: Mastra's `model_chunk`, a span per streamed chunk of a call its `chat` already tells of. */
const UNSHOWN_OPERATIONS = new Set(["model_chunk"]);

const operationOf = (record: TelemetryRecord) => (record.signal === "span" ? (stringAttr(record.attributes, "gen_ai.operation.name") ?? "") : "");

export const genAi: Dialect = {
  name: "genai",
  recognises: (record) => Object.hasOwn(GEN_AI_OPERATIONS, operationOf(record)) || UNSHOWN_OPERATIONS.has(operationOf(record)),
  map: (record) => (record.signal === "span" && Object.hasOwn(GEN_AI_OPERATIONS, operationOf(record)) ? genAiSpan(record) : null),
  knows: (record) => UNSHOWN_OPERATIONS.has(operationOf(record)),
};

function genAiSpan(span: SpanRecord): LifecycleChange {
  const a = span.attributes;
  const operation = stringAttr(a, "gen_ai.operation.name")!;
  const role = GEN_AI_OPERATIONS[operation]!;
  const finishReasons = finishReasonsOf(a);
  if (role === "tool") {
    const outcome = spanOutcome(span, []);
    const name = stringAttr(a, "gen_ai.tool.name") ?? span.name;
    return spanChange(span, {
      kind: "call",
      summary: [name, outcome.failed ? `failed: ${outcome.error}` : "ok", `${Math.round(span.endMs - span.startMs)} ms`].join(", "),
      detail: { operation, tool: name, call_id: stringAttr(a, "gen_ai.tool.call.id") ?? null },
      facts: {
        ...endFacts(span, outcome),
        part: {
          kind: "tool",
          id: stringAttr(a, "gen_ai.tool.call.id") ?? span.spanId,
          at: span.endMs,
          fields: { name, durationMs: span.endMs - span.startMs, success: !outcome.failed, ...(outcome.error && { error: outcome.error }) },
        },
      },
    });
  }
  const model = stringAttr(a, "gen_ai.response.model") ?? stringAttr(a, "gen_ai.request.model");
  const usage = usageOf(a);
  if (role === "run") {
    const outcome = spanOutcome(span, finishReasons);
    const agent = stringAttr(a, "gen_ai.agent.name");
    return spanChange(span, {
      kind: "agent",
      summary: [
        agent,
        model,
        outcome.failed && `failed: ${outcome.error}`,
        `${Math.round(span.endMs - span.startMs)} ms`,
        finishReasons.length > 0 && `finish: ${finishReasons.join(", ")}`,
      ]
        .filter(Boolean)
        .join(", "),
      detail: { operation, agent: agent ?? null, provider: providerOf(a), finish_reasons: finishReasons, ...(outcome.error && { error: outcome.error }) },
      facts: { ...endFacts(span, outcome), enclosing: true, ...(model && { model }) },
    });
  }
  // A model call that ends with neither a finish reason nor any usage never got its answer: a stream the caller gave up on.
  const unfinished =
    operation !== "embeddings" && finishReasons.length === 0 && usage.outputTokens === undefined && span.status.code !== "error" ? UNFINISHED_CALL : undefined;
  const outcome = spanOutcome(span, finishReasons, unfinished);
  return spanChange(
    span,
    callChange(span, {
      operation,
      model,
      usage,
      finishReasons,
      outcome,
      requestId: stringAttr(a, "gen_ai.response.id") ?? stringAttr(a, "anthropic.request.id"),
      provider: providerOf(a),
    }),
  );
}

/** The finish reasons: the conventions' list, else a provider's own (the Anthropic SDK's stop reason). */
function finishReasonsOf(a: Attributes): string[] {
  const listed = textList(a["gen_ai.response.finish_reasons"]);
  return listed.length > 0 ? listed : textList(a["anthropic.message.stop_reason"]);
}

const providerOf = (a: Attributes) => stringAttr(a, "gen_ai.provider.name") ?? stringAttr(a, "gen_ai.system") ?? null;

/** Tokens by the current conventions' names, else the previous ones'. */
export function usageOf(a: Attributes): Pick<PartFields, "inputTokens" | "outputTokens" | "cacheReadTokens" | "cacheWriteTokens"> {
  const inputTokens = numberAttr(a, "gen_ai.usage.input_tokens") ?? numberAttr(a, "gen_ai.usage.prompt_tokens");
  const outputTokens = numberAttr(a, "gen_ai.usage.output_tokens") ?? numberAttr(a, "gen_ai.usage.completion_tokens");
  const cacheReadTokens = numberAttr(a, "gen_ai.usage.cache_read.input_tokens");
  const cacheWriteTokens = numberAttr(a, "gen_ai.usage.cache_write.input_tokens") ?? numberAttr(a, "gen_ai.usage.cache_creation.input_tokens");
  return {
    ...(inputTokens !== undefined && { inputTokens }),
    ...(outputTokens !== undefined && { outputTokens }),
    ...(cacheReadTokens !== undefined && { cacheReadTokens }),
    ...(cacheWriteTokens !== undefined && { cacheWriteTokens }),
  };
}

/** What a span's end says: its times, and completed or failed. */
export function endFacts(span: SpanRecord, outcome: ReturnType<typeof spanOutcome>): Facts {
  return {
    startedAt: span.startMs,
    processingAt: span.startMs,
    endedAt: span.endMs,
    failed: outcome.failed,
    ...(outcome.failed ? { error: outcome.error } : { succeeded: true }),
    ...(outcome.attempt !== undefined && { attempt: outcome.attempt }),
  };
}

interface CallReading {
  operation: string;
  model?: string;
  usage: ReturnType<typeof usageOf>;
  finishReasons: string[];
  outcome: ReturnType<typeof spanOutcome>;
  requestId?: string;
  provider: string | null;
  /** The span whose calls are tries at one call (the AI SDK 6's). */
  attemptsOf?: string;
}

/** A model call's step, facts and part. */
export function callChange(span: SpanRecord, call: CallReading): Omit<SpanChange, "kind"> & { kind: LifecycleKind } {
  const { model, usage, finishReasons, outcome } = call;
  const fields: PartFields = {
    ...(model && { model }),
    ...usage,
    durationMs: span.endMs - span.startMs,
    ...(outcome.attempt !== undefined && { attempt: outcome.attempt }),
    ...(call.attemptsOf !== undefined && { attemptsOf: call.attemptsOf }),
    spanId: span.spanId,
    ...(span.parentSpanId && { parentSpanId: span.parentSpanId }),
    success: !outcome.failed,
    ...(outcome.error && { error: outcome.error }),
  };
  const attempt = outcome.attempt;
  return {
    kind: "call",
    summary: [
      model,
      outcome.failed ? `failed: ${outcome.error}` : `${usage.inputTokens ?? 0} in / ${usage.outputTokens ?? 0} out`,
      `${Math.round(span.endMs - span.startMs)} ms`,
      attempt !== undefined && attempt > 1 && `${attempt} attempts`,
      finishReasons.length > 0 && `finish: ${finishReasons.join(", ")}`,
    ]
      .filter(Boolean)
      .join(", "),
    detail: {
      operation: call.operation,
      provider: call.provider,
      request_id: call.requestId ?? null,
      finish_reasons: finishReasons,
      ...(outcome.error && { error: outcome.error }),
    },
    facts: { ...endFacts(span, outcome), ...(model && { model }), part: { kind: "call", id: call.requestId ?? span.spanId, at: span.endMs, fields } },
  };
}

interface SpanChange {
  kind: LifecycleKind;
  summary: string;
  detail: LifecycleChange["step"]["detail"];
  facts: Facts;
}

/** A span as a change: named by its span, inside its parent's lifecycle once that arrives, in its conversation. */
export function spanChange(span: SpanRecord, change: SpanChange): LifecycleChange {
  const a = span.attributes;
  return {
    kind: change.kind,
    keys: [`span:${span.spanId}`],
    ...(span.parentSpanId && { parent: `span:${span.parentSpanId}` }),
    service: stringAttr(span.origin.resource, "service.name") ?? "unknown_service",
    session: stringAttr(a, "gen_ai.conversation.id") ?? stringAttr(a, "session.id") ?? `trace-${span.traceId}`,
    traceId: span.traceId,
    step: spanStep(span, span.name, change.summary, change.detail),
    facts: change.facts,
  };
}
