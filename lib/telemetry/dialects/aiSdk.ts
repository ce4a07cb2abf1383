import { numberAttr, stringAttr, type Attributes, type SpanRecord } from "../records";
import type { LifecycleChange } from "../mapping/changes";
import type { Dialect } from "./dialect";
import { callChange, endFacts, spanChange } from "./genAi";
import { spanOutcome, textList } from "./spanOutcome";
import { UNFINISHED_CALL } from "../mapping/stoppedCalls";

/**
 * The Vercel AI SDK's own spans (`ai.*`: the AI SDK 6 with `experimental_telemetry`, the AI SDK 7
 * with `@ai-sdk/otel`'s LegacyOpenTelemetry), by their scope `ai` or their `ai.operationId`: a
 * `generateText`/`streamText` (or object) call is one lifecycle (an agent's run: its steps are
 * its model calls), its `doGenerate`/`doStream` spans its calls, its `ai.toolCall` spans its tools;
 * an `embed`/`embedMany` is a call lifecycle with its `doEmbed` calls. The 6 makes a `doGenerate`
 * span per attempt: they are one call's attempts. Its `doGenerate` spans carry some `gen_ai.*` too,
 * so it is asked before the GenAI conventions.
 */

export const aiSdk: Dialect = {
  name: "ai-sdk",
  recognises: (record) => record.signal === "span" && (record.origin.scope.name === "ai" || stringAttr(record.attributes, "ai.operationId") !== undefined),
  map: (record) => (record.signal === "span" ? aiSdkSpan(record) : null),
};

function aiSdkSpan(span: SpanRecord): LifecycleChange | null {
  const a = span.attributes;
  const operation = stringAttr(a, "ai.operationId") ?? span.name;
  const ms = `${Math.round(span.endMs - span.startMs)} ms`;
  if (operation === "ai.toolCall") return toolCallSpan(span, operation, ms);
  const match = /^ai\.(generateText|streamText|generateObject|streamObject|embed|embedMany)(?:\.(doGenerate|doStream|doEmbed))?$/.exec(operation);
  if (!match) return null;
  const [, fn, provider] = match;
  const embedding = fn!.startsWith("embed");
  const model = stringAttr(a, "ai.response.model") ?? stringAttr(a, "ai.model.id");
  const finishReasons = textList(a["ai.response.finishReason"]);
  // A generation ends with a finish reason; one that ends without one, and without an error, was given up on (a stream aborted).
  const unfinished =
    !embedding && finishReasons.length === 0 && span.status.code !== "error" && span.events.every((event) => event.name !== "exception")
      ? UNFINISHED_CALL
      : undefined;
  const outcome = spanOutcome(span, finishReasons, unfinished);
  if (provider === undefined) {
    const prompt = promptOf(stringAttr(a, "ai.prompt"));
    const output = stringAttr(a, "ai.response.text");
    return spanChange(span, {
      kind: embedding ? "call" : "agent",
      summary: [model, outcome.failed && `failed: ${outcome.error}`, ms, finishReasons.length > 0 && `finish: ${finishReasons.join(", ")}`]
        .filter(Boolean)
        .join(", "),
      detail: {
        operation,
        function_id: stringAttr(a, "ai.telemetry.functionId") ?? null,
        provider: stringAttr(a, "ai.model.provider") ?? null,
        finish_reasons: finishReasons,
        ...(outcome.error && { error: outcome.error }),
      },
      facts: {
        ...endFacts(span, outcome),
        enclosing: true,
        ...(model && { model }),
        ...(prompt !== undefined && { prompt }),
        ...(output !== undefined && { output }),
      },
    });
  }
  return spanChange(
    span,
    callChange(span, {
      operation,
      model,
      usage: usageOf(a),
      finishReasons,
      outcome,
      requestId: stringAttr(a, "ai.response.id"),
      provider: stringAttr(a, "ai.model.provider") ?? null,
      ...(span.parentSpanId && { attemptsOf: span.parentSpanId }),
    }),
  );
}

/** A tool's call (`ai.toolCall`): a part of the run it is in. */
function toolCallSpan(span: SpanRecord, operation: string, ms: string): LifecycleChange {
  const a = span.attributes;
  const outcome = spanOutcome(span, []);
  const name = stringAttr(a, "ai.toolCall.name") ?? span.name;
  return spanChange(span, {
    kind: "call",
    summary: [name, outcome.failed ? `failed: ${outcome.error}` : "ok", ms].join(", "),
    detail: { operation, tool: name, call_id: stringAttr(a, "ai.toolCall.id") ?? null },
    facts: {
      ...endFacts(span, outcome),
      part: {
        kind: "tool",
        id: stringAttr(a, "ai.toolCall.id") ?? span.spanId,
        at: span.endMs,
        fields: { name, durationMs: span.endMs - span.startMs, success: !outcome.failed, ...(outcome.error && { error: outcome.error }) },
      },
    },
  });
}

/** A call's tokens, under the names the AI SDK 6 and 7 give them. */
function usageOf(a: Attributes) {
  const inputTokens = numberAttr(a, "ai.usage.inputTokens") ?? numberAttr(a, "ai.usage.promptTokens") ?? numberAttr(a, "ai.usage.tokens");
  const outputTokens = numberAttr(a, "ai.usage.outputTokens") ?? numberAttr(a, "ai.usage.completionTokens");
  const cacheReadTokens = numberAttr(a, "ai.usage.inputTokenDetails.cacheReadTokens") ?? numberAttr(a, "ai.usage.cachedInputTokens");
  const cacheWriteTokens = numberAttr(a, "ai.usage.inputTokenDetails.cacheWriteTokens");
  return {
    ...(inputTokens !== undefined && { inputTokens }),
    ...(outputTokens !== undefined && { outputTokens }),
    ...(cacheReadTokens !== undefined && { cacheReadTokens }),
    ...(cacheWriteTokens !== undefined && { cacheWriteTokens }),
  };
}

/** `ai.prompt` is the call's options as JSON (`{"prompt":"hi"}`, or its messages): the prompt's text where it is one. */
function promptOf(json: string | undefined): string | undefined {
  if (json === undefined) return undefined;
  try {
    const parsed = JSON.parse(json) as { prompt?: unknown };
    return typeof parsed.prompt === "string" ? parsed.prompt : json;
  } catch {
    return json;
  }
}
