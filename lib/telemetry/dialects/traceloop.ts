import { stringAttr, type SpanRecord } from "../records";
import type { LifecycleChange } from "../mapping/changes";
import type { Dialect } from "./dialect";
import { callChange, endFacts, spanChange, usageOf } from "./genAi";
import { spanOutcome, textList } from "./spanOutcome";

/**
 * Traceloop's OpenLLMetry (`@traceloop/node-server-sdk`): its own spans, by `traceloop.span.kind`
 * (withWorkflow, withAgent, withTask: an agent's run; withTool: a tool), and the model calls of its
 * older instrumentations, which say `llm.request.type` rather than `gen_ai.operation.name`. Its
 * current instrumentations' calls follow the GenAI conventions and are read by that dialect.
 */
export const traceloop: Dialect = {
  name: "traceloop",
  recognises: (record) =>
    record.signal === "span" &&
    (stringAttr(record.attributes, "traceloop.span.kind") !== undefined ||
      (stringAttr(record.attributes, "llm.request.type") !== undefined && stringAttr(record.attributes, "gen_ai.operation.name") === undefined)),
  map: (record) => (record.signal === "span" ? traceloopSpan(record) : null),
};

function traceloopSpan(span: SpanRecord): LifecycleChange | null {
  const a = span.attributes;
  const kind = stringAttr(a, "traceloop.span.kind");
  const ms = `${Math.round(span.endMs - span.startMs)} ms`;
  const name = stringAttr(a, "traceloop.entity.name") ?? span.name;
  if (kind === "tool") {
    const outcome = spanOutcome(span, []);
    return spanChange(span, {
      kind: "call",
      summary: [name, outcome.failed ? `failed: ${outcome.error}` : "ok", ms].join(", "),
      detail: { span_kind: kind, tool: name },
      facts: {
        ...endFacts(span, outcome),
        part: {
          kind: "tool",
          id: span.spanId,
          at: span.endMs,
          fields: { name, durationMs: span.endMs - span.startMs, success: !outcome.failed, ...(outcome.error && { error: outcome.error }) },
        },
      },
    });
  }
  if (kind === "workflow" || kind === "agent" || kind === "task") {
    const outcome = spanOutcome(span, []);
    return spanChange(span, {
      kind: "agent",
      summary: [name, outcome.failed && `failed: ${outcome.error}`, ms].filter(Boolean).join(", "),
      detail: { span_kind: kind, ...(outcome.error && { error: outcome.error }) },
      facts: { ...endFacts(span, outcome), enclosing: true },
    });
  }
  if (kind !== undefined) return null;
  // An older instrumentation's model call: the previous GenAI names, `llm.request.type` for the operation.
  const operation = stringAttr(a, "llm.request.type")!;
  const finishReasons = textList(a["gen_ai.response.finish_reasons"]);
  const model = stringAttr(a, "gen_ai.response.model") ?? stringAttr(a, "gen_ai.request.model");
  return spanChange(
    span,
    callChange(span, {
      operation,
      model,
      usage: usageOf(a),
      finishReasons,
      outcome: spanOutcome(span, finishReasons),
      requestId: stringAttr(a, "gen_ai.response.id"),
      provider: stringAttr(a, "gen_ai.system") ?? null,
    }),
  );
}
