import { numberAttr, stringAttr, type SpanRecord } from "../records";
import type { LifecycleChange } from "../mapping/changes";
import type { Dialect } from "./dialect";

/**
 * A message's life in a queue, from spans that follow OpenTelemetry's messaging conventions
 * (BullMQ's bullmq-otel, reqwatch's own `reqwatch otel`, ...): the message is named by its system,
 * destination and `messaging.message.id`; its create (or publish, send) span says when it was
 * created and queued, each process span is an attempt, and the latest one's end says how it ended.
 */
const CREATE = new Set(["create", "publish", "send"]);
const PROCESS = new Set(["process", "deliver"]);

function operationOf(span: SpanRecord): string | undefined {
  return stringAttr(span.attributes, "messaging.operation.type") ?? stringAttr(span.attributes, "messaging.operation");
}

function isMessaging(span: SpanRecord): boolean {
  const operation = operationOf(span) ?? "";
  return stringAttr(span.attributes, "messaging.system") !== undefined && stringAttr(span.attributes, "messaging.message.id") !== undefined && (CREATE.has(operation) || PROCESS.has(operation));
}

export const messaging: Dialect = {
  name: "messaging",
  recognises: (record) => record.signal === "span" && isMessaging(record),
  map: (record) => (record.signal === "span" ? messagingSpan(record) : null),
};

function messagingSpan(span: SpanRecord): LifecycleChange {
  const a = span.attributes;
  const system = stringAttr(a, "messaging.system")!;
  const destination = stringAttr(a, "messaging.destination.name") ?? "";
  const id = stringAttr(a, "messaging.message.id")!;
  const operation = operationOf(span)!;
  const created = CREATE.has(operation);
  const failed = span.status.code === "error" || stringAttr(a, "error.type") !== undefined;
  const error = failed ? span.status.message || stringAttr(a, "error.type") || "failed" : undefined;
  const attempt = numberAttr(a, "reqwatch.attempt") ?? numberAttr(a, "messaging.message.delivery_attempt");
  const wait = created ? null : numberAttr(a, "reqwatch.wait_ms");
  return {
    kind: "message",
    keys: [`message:${system}/${destination}/${id}`],
    service: destination || (stringAttr(span.origin.resource, "service.name") ?? system),
    ...(stringAttr(a, "session.id") && { session: stringAttr(a, "session.id") }),
    traceId: span.traceId,
    step: {
      key: `span:${span.spanId}`,
      at: span.endMs,
      startAt: span.startMs,
      ...(span.parentSpanId && { parentKey: `span:${span.parentSpanId}` }),
      name: created ? operation : `process${attempt !== undefined ? ` (attempt ${attempt})` : ""}`,
      summary: [created ? `into ${destination || system}` : failed ? `failed: ${error}` : stringAttr(a, "reqwatch.outcome") ?? "done", `${Math.round(span.endMs - span.startMs)} ms`, wait !== null && wait !== undefined && `waited ${Math.round(wait)} ms`].filter(Boolean).join(", "),
      detail: { system, destination, operation, ...(attempt !== undefined && { attempt }), ...(error && { error }) },
    },
    facts: created
      ? { startedAt: span.startMs, queuedAt: span.endMs }
      : { processingAt: span.startMs, endedAt: span.endMs, failed, ...(error && { error }), ...(!failed && { succeeded: true }), ...(attempt !== undefined && { attempt }), ...(stringAttr(a, "gen_ai.request.model") && { model: stringAttr(a, "gen_ai.request.model") }) },
  };
}
