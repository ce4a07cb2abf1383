import { numberAttr, stringAttr, type SpanRecord } from "../records";
import type { LifecycleChange, PartFields } from "../mapping/changes";
import type { Dialect } from "./dialect";

/**
 * A model call from any instrumentation that follows OpenTelemetry's GenAI semantic conventions
 * (the Anthropic SDK's `anthropic.messages.create`, OpenAI's, Vercel's AI SDK, ...): one lifecycle
 * per call span, in its conversation (`gen_ai.conversation.id`, else `session.id`, else its trace),
 * with its model, tokens, attempts and error. Only the operations that are one call to a model:
 * an agent's or a tool's span holds such calls, and counting it too would count their tokens twice.
 */
const CALL_OPERATIONS = new Set(["chat", "text_completion", "generate_content", "embeddings"]);

export const genAi: Dialect = {
  name: "genai",
  recognises: (record) => record.signal === "span" && CALL_OPERATIONS.has(stringAttr(record.attributes, "gen_ai.operation.name") ?? ""),
  map: (record) => (record.signal === "span" ? genAiSpan(record) : null),
};

function genAiSpan(span: SpanRecord): LifecycleChange {
  const a = span.attributes;
  const model = stringAttr(a, "gen_ai.response.model") ?? stringAttr(a, "gen_ai.request.model");
  const resends = numberAttr(a, "http.request.resend_count");
  const attempt = resends === undefined ? undefined : resends + 1;
  const errorType = stringAttr(a, "error.type");
  const failed = span.status.code === "error" || errorType !== undefined;
  // "529 overloaded_error: Overloaded": the HTTP status, the error's type and its message, as far as the span says them.
  const httpStatus = numberAttr(a, "http.response.status_code");
  const error = failed ? [[httpStatus, errorType].filter((part) => part !== undefined).join(" "), span.status.message].filter(Boolean).join(": ") || "failed" : undefined;
  const finish = a["gen_ai.response.finish_reasons"];
  const fields: PartFields = {
    ...(model && { model }),
    ...(numberAttr(a, "gen_ai.usage.input_tokens") !== undefined && { inputTokens: numberAttr(a, "gen_ai.usage.input_tokens") }),
    ...(numberAttr(a, "gen_ai.usage.output_tokens") !== undefined && { outputTokens: numberAttr(a, "gen_ai.usage.output_tokens") }),
    ...(numberAttr(a, "gen_ai.usage.cache_read.input_tokens") !== undefined && { cacheReadTokens: numberAttr(a, "gen_ai.usage.cache_read.input_tokens") }),
    ...((numberAttr(a, "gen_ai.usage.cache_write.input_tokens") ?? numberAttr(a, "gen_ai.usage.cache_creation.input_tokens")) !== undefined && { cacheWriteTokens: numberAttr(a, "gen_ai.usage.cache_write.input_tokens") ?? numberAttr(a, "gen_ai.usage.cache_creation.input_tokens") }),
    durationMs: span.endMs - span.startMs,
    ...(attempt !== undefined && { attempt }),
    success: !failed,
    ...(error && { error }),
  };
  const session = stringAttr(a, "gen_ai.conversation.id") ?? stringAttr(a, "session.id") ?? `trace-${span.traceId}`;
  const requestId = stringAttr(a, "gen_ai.response.id") ?? stringAttr(a, "anthropic.request.id");
  // The conventions' list, else a provider's own (the Anthropic SDK's stop reason).
  const finishReasons = Array.isArray(finish) ? finish.filter((reason): reason is string => typeof reason === "string") : [stringAttr(a, "anthropic.message.stop_reason")].filter((reason): reason is string => reason !== undefined);
  return {
    kind: "call",
    keys: [`span:${span.spanId}`],
    service: stringAttr(span.origin.resource, "service.name") ?? "unknown_service",
    session,
    traceId: span.traceId,
    step: {
      key: `span:${span.spanId}`,
      at: span.endMs,
      startAt: span.startMs,
      ...(span.parentSpanId && { parentKey: `span:${span.parentSpanId}` }),
      name: span.name,
      summary: [model, failed ? `failed: ${error}` : `${fields.inputTokens ?? 0} in / ${fields.outputTokens ?? 0} out`, `${Math.round(span.endMs - span.startMs)} ms`, attempt !== undefined && attempt > 1 && `${attempt} attempts`, finishReasons.length > 0 && `finish: ${finishReasons.join(", ")}`].filter(Boolean).join(", "),
      detail: { operation: stringAttr(a, "gen_ai.operation.name") ?? null, provider: stringAttr(a, "gen_ai.provider.name") ?? stringAttr(a, "gen_ai.system") ?? null, request_id: requestId ?? null, finish_reasons: finishReasons, ...(error && { error }) },
    },
    facts: { startedAt: span.startMs, processingAt: span.startMs, endedAt: span.endMs, failed, ...(failed ? { error } : { succeeded: true }), ...(model && { model }), ...(attempt !== undefined && { attempt }), part: { kind: "call", id: requestId ?? span.spanId, at: span.endMs, fields } },
  };
}
