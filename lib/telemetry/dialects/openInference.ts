import { numberAttr, stringAttr, type SpanRecord } from "../records";
import type { LifecycleChange } from "../mapping/changes";
import type { Dialect } from "./dialect";
import { callChange, endFacts, spanChange, type SpanRole } from "./genAi";
import { spanOutcome, textList } from "./spanOutcome";
import { UNFINISHED_CALL } from "../mapping/stoppedCalls";

/**
 * OpenInference's spans (Arize's instrumentations: `@arizeai/openinference-instrumentation-*`, and
 * openinference-core's traceAgent/traceTool...), by `openinference.span.kind`: an AGENT or CHAIN is
 * an agent's run, an LLM or EMBEDDING span a model call (`llm.model_name`, `llm.token_count.*`,
 * `llm.finish_reason`), a TOOL, RETRIEVER or RERANKER span a tool. The Anthropic SDK traces its own
 * call inside OpenInference's (a GenAI `chat` span): the two are one call (PartFields.parentSpanId).
 */
const KINDS: Readonly<Record<string, SpanRole>> = {
  AGENT: "run",
  CHAIN: "run",
  LLM: "call",
  EMBEDDING: "call",
  TOOL: "tool",
  RETRIEVER: "tool",
  RERANKER: "tool",
};

export const openInference: Dialect = {
  name: "openinference",
  recognises: (record) => record.signal === "span" && stringAttr(record.attributes, "openinference.span.kind") !== undefined,
  map: (record) => (record.signal === "span" ? openInferenceSpan(record) : null),
};

function openInferenceSpan(span: SpanRecord): LifecycleChange | null {
  const a = span.attributes;
  const spanKind = stringAttr(a, "openinference.span.kind")!;
  const role = KINDS[spanKind.toUpperCase()];
  if (role === undefined) return null;
  const ms = `${Math.round(span.endMs - span.startMs)} ms`;
  const text = (key: string) => (stringAttr(a, `${key}.mime_type`) === "application/json" ? undefined : stringAttr(a, `${key}.value`));
  if (role === "tool") {
    const outcome = spanOutcome(span, []);
    const name = stringAttr(a, "tool.name") ?? span.name;
    const id = stringAttr(a, "tool_call.id") ?? stringAttr(a, "tool.id") ?? span.spanId;
    return spanChange(span, {
      kind: "call",
      summary: [name, outcome.failed ? `failed: ${outcome.error}` : "ok", ms].join(", "),
      detail: { span_kind: spanKind, tool: name },
      facts: {
        ...endFacts(span, outcome),
        part: {
          kind: "tool",
          id,
          at: span.endMs,
          fields: { name, durationMs: span.endMs - span.startMs, success: !outcome.failed, ...(outcome.error && { error: outcome.error }) },
        },
      },
    });
  }
  const model = stringAttr(a, "llm.response.model_name") ?? stringAttr(a, "llm.model_name") ?? stringAttr(a, "embedding.model_name");
  if (role === "run") {
    const outcome = spanOutcome(span, []);
    const prompt = text("input");
    const output = text("output");
    return spanChange(span, {
      kind: "agent",
      summary: [span.name, outcome.failed && `failed: ${outcome.error}`, ms].filter(Boolean).join(", "),
      detail: { span_kind: spanKind, ...(outcome.error && { error: outcome.error }) },
      facts: { ...endFacts(span, outcome), enclosing: true, ...(prompt !== undefined && { prompt }), ...(output !== undefined && { output }) },
    });
  }
  const finishReasons = textList(a["llm.finish_reason"]);
  const inputTokens = numberAttr(a, "llm.token_count.prompt");
  const outputTokens = numberAttr(a, "llm.token_count.completion");
  const cacheReadTokens = numberAttr(a, "llm.token_count.prompt_details.cache_read");
  const cacheWriteTokens = numberAttr(a, "llm.token_count.prompt_details.cache_write");
  const usage = {
    ...(inputTokens !== undefined && { inputTokens }),
    ...(outputTokens !== undefined && { outputTokens }),
    ...(cacheReadTokens !== undefined && { cacheReadTokens }),
    ...(cacheWriteTokens !== undefined && { cacheWriteTokens }),
  };
  const unfinished =
    spanKind === "LLM" && finishReasons.length === 0 && outputTokens === undefined && span.status.code !== "error" ? UNFINISHED_CALL : undefined;
  return spanChange(
    span,
    callChange(span, {
      operation: spanKind,
      model,
      usage,
      finishReasons,
      outcome: spanOutcome(span, finishReasons, unfinished),
      provider: stringAttr(a, "llm.provider") ?? stringAttr(a, "llm.system") ?? null,
    }),
  );
}
