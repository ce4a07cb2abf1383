import { numberAttr, stringAttr, type Attributes, type SpanRecord } from "../records";
import type { LifecycleChange } from "../mapping/changes";
import type { Dialect } from "./dialect";
import { spanStep } from "./stepText";

/**
 * A message's life in a queue, from spans that follow OpenTelemetry's messaging conventions, in
 * their current names (`messaging.message.id`, `messaging.operation.type`,
 * `messaging.destination.name`: reqwatch's own `reqwatch otel`, ...) or their older ones
 * (`messaging.message_id`, `messaging.operation`, `messaging.destination`: the amqplib
 * instrumentation, ...). The message is named by its system, destination and id; its create (or
 * publish, send) span says when it was created and queued, a receive span when a consumer took it,
 * each process span is an attempt, and the latest one's end says how it ended.
 */
const CREATE = new Set(["create", "publish", "send"]);
const RECEIVE = new Set(["receive"]);
const PROCESS = new Set(["process", "deliver"]);

/**
 * The operation, by either name. The older conventions set no operation on a send: a producer's
 * span without one is a send.
 */
function operationOf(span: SpanRecord): string | undefined {
  const said = stringAttr(span.attributes, "messaging.operation.type") ?? stringAttr(span.attributes, "messaging.operation");
  return said ?? (span.kind === "producer" ? "send" : undefined);
}

const messageIdOf = (a: Attributes) => stringAttr(a, "messaging.message.id") ?? stringAttr(a, "messaging.message_id");

/**
 * Where it was sent, by either name; RabbitMQ's default exchange has an empty name, so the
 * routing key (the queue's name there) stands for it.
 */
const destinationOf = (a: Attributes) =>
  stringAttr(a, "messaging.destination.name") ??
  stringAttr(a, "messaging.destination") ??
  stringAttr(a, "messaging.rabbitmq.destination.routing_key") ??
  stringAttr(a, "messaging.rabbitmq.routing_key") ??
  "";

/**
 * How a failed delivery left its message, where the amqplib instrumentation says it (only in its
 * status's text): a nack or reject without requeue ends it; one with requeue, or without saying
 * (amqplib requeues by default), and a closed channel's unacked deliveries go back to the queue;
 * after the instrumentation's own timeout it is not known. Other spans' failures end it.
 */
function afterFailure(span: SpanRecord): "ended" | "requeued" | "unknown" {
  if (span.origin.scope.name !== "@opentelemetry/instrumentation-amqplib") return "ended";
  const status = span.status.message;
  if (status.endsWith(" without requeue")) return "ended";
  return status === "instrumentation timeout" ? "unknown" : "requeued";
}

function isMessaging(span: SpanRecord): boolean {
  const operation = operationOf(span) ?? "";
  return (
    stringAttr(span.attributes, "messaging.system") !== undefined &&
    messageIdOf(span.attributes) !== undefined &&
    (CREATE.has(operation) || RECEIVE.has(operation) || PROCESS.has(operation))
  );
}

export const messaging: Dialect = {
  name: "messaging",
  recognises: (record) => record.signal === "span" && isMessaging(record),
  map: (record) => (record.signal === "span" ? messagingSpan(record) : null),
};

function messagingSpan(span: SpanRecord): LifecycleChange {
  const a = span.attributes;
  const system = stringAttr(a, "messaging.system")!;
  const destination = destinationOf(a);
  const id = messageIdOf(a)!;
  const operation = operationOf(span)!;
  const created = CREATE.has(operation);
  const received = RECEIVE.has(operation);
  const failed = span.status.code === "error" || stringAttr(a, "error.type") !== undefined;
  const error = failed ? span.status.message || stringAttr(a, "error.type") || "failed" : undefined;
  const attempt = numberAttr(a, "reqwatch.attempt") ?? numberAttr(a, "messaging.message.delivery_attempt");
  const wait = created ? null : numberAttr(a, "reqwatch.wait_ms");
  const after = failed && !created && !received ? afterFailure(span) : "ended";
  const outcome = failed
    ? `failed: ${error}${after === "requeued" ? " (back in the queue)" : ""}`
    : received
      ? `taken from ${destination || system}`
      : (stringAttr(a, "reqwatch.outcome") ?? "done");
  return {
    kind: "message",
    keys: [`message:${system}/${destination}/${id}`],
    service: destination || (stringAttr(span.origin.resource, "service.name") ?? system),
    ...(stringAttr(a, "session.id") && { session: stringAttr(a, "session.id") }),
    traceId: span.traceId,
    step: spanStep(
      span,
      created || received ? operation : `process${attempt !== undefined ? ` (attempt ${attempt})` : ""}`,
      [
        created ? `into ${destination || system}` : outcome,
        `${Math.round(span.endMs - span.startMs)} ms`,
        wait !== null && wait !== undefined && `waited ${Math.round(wait)} ms`,
      ]
        .filter(Boolean)
        .join(", "),
      { system, destination, operation, ...(attempt !== undefined && { attempt }), ...(error && { error }) },
    ),
    facts: created
      ? { startedAt: span.startMs, queuedAt: span.endMs }
      : received
        ? // Taken by a consumer: its processing, not an end (a failed receive took nothing).
          { ...(!failed && { processingAt: span.endMs }), ...(error && { error }) }
        : {
            processingAt: span.startMs,
            ...(after === "ended" && { endedAt: span.endMs, failed }),
            ...(after === "requeued" && { requeuedAt: span.endMs }),
            ...(error && { error }),
            ...(!failed && { succeeded: true }),
            ...(attempt !== undefined && { attempt }),
            ...(stringAttr(a, "gen_ai.request.model") && { model: stringAttr(a, "gen_ai.request.model") }),
          },
  };
}
