import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { NO_REDACTION } from "../helpers/claudeCodeExports";
import { tempParent } from "../helpers/stateDir";
import { readRows } from "../helpers/telemetryRows";

// The messaging conventions in both their names, the current ones (messaging.message.id,
// messaging.operation.type, messaging.destination.name) and the older ones (messaging.message_id,
// messaging.operation, messaging.destination). The older ones are on spans BUILT HERE the way
// @opentelemetry/instrumentation-amqplib 0.71.0 builds them (its dist/amqplib.cjs: createPublishSpan
// and the consume patch, read for this test), not captured from it.

type Value = string | number;
interface SpanSpec {
  id: string;
  name: string;
  kind: number;
  start: number;
  end: number;
  attributes: Record<string, Value>;
  status?: { code: number; message?: string };
  parent?: string;
}

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_KIND = { producer: 4, consumer: 5 } as const;

/** An OTLP/JSON traces export of these spans, from `service`. */
function anExport(spans: SpanSpec[], service = "shop"): Buffer {
  const attributes = (values: Record<string, Value>) =>
    Object.entries(values).map(([key, value]) => ({ key, value: typeof value === "number" ? { intValue: value } : { stringValue: value } }));
  const otlp = spans.map((span) => ({
    traceId: TRACE,
    spanId: span.id,
    ...(span.parent && { parentSpanId: span.parent }),
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: `${span.start}000000`,
    endTimeUnixNano: `${span.end}000000`,
    attributes: attributes(span.attributes),
    status: span.status ?? {},
  }));
  return Buffer.from(
    JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: attributes({ "service.name": service }) },
          scopeSpans: [{ scope: { name: "@opentelemetry/instrumentation-amqplib", version: "0.71.0" }, spans: otlp }],
        },
      ],
    }),
  );
}

/** What the amqplib instrumentation puts on every span from the connection (utils.cjs getConnectionAttributesFromUrl and FromServer). */
const CONNECTION = {
  "messaging.system": "rabbitmq",
  "messaging.protocol": "AMQP",
  "messaging.protocol_version": "0.9.1",
  "server.address": "127.0.0.1",
  "server.port": 5672,
  "messaging.url": "amqp://127.0.0.1:5672",
};

/** `channel.sendToQueue(queue, body, { messageId })`: a publish to the default exchange (named ""), the queue as its routing key, no operation (a send, in those conventions). */
const publish = (id: string, messageId: string, queue: string, at: number): SpanSpec => ({
  id,
  name: "publish <default>",
  kind: SPAN_KIND.producer,
  start: at,
  end: at + 2,
  attributes: {
    ...CONNECTION,
    "messaging.destination": "",
    "messaging.destination_kind": "topic",
    "messaging.rabbitmq.routing_key": queue,
    "messaging.message_id": messageId,
  },
});

/** A consumer's delivery, ended by its ack (status unset) or its nack (status error, with what was called). */
const consume = (id: string, messageId: string, queue: string, at: number, nack?: string): SpanSpec => ({
  id,
  name: `${queue} process`,
  kind: SPAN_KIND.consumer,
  start: at,
  end: at + 30,
  attributes: {
    ...CONNECTION,
    "messaging.destination": "",
    "messaging.destination_kind": "topic",
    "messaging.rabbitmq.routing_key": queue,
    "messaging.operation": "process",
    "messaging.message_id": messageId,
  },
  ...(nack && { status: { code: 2, message: nack } }),
});

function aStore() {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  const feed = (...spans: SpanSpec[]) => ingestExport(store, NO_REDACTION, "traces", decodeExport("traces", "json", anExport(spans)));
  const read = <T>(sql: string) => readRows<T>(file, sql);
  return {
    store,
    feed,
    messages: () => read<Record<string, unknown>>("SELECT * FROM lifecycles ORDER BY seq"),
    steps: () => read<{ name: string; summary: string }>("SELECT name, summary FROM steps ORDER BY at, step_key"),
  };
}

describe("the older messaging conventions, on spans built as the amqplib instrumentation builds them", () => {
  const at = Date.now() - 10_000;

  it("a message sent to a queue and acked: one message in the queue's workspace, queued then completed", () => {
    const { feed, messages, steps } = aStore();
    feed(publish("00f067aa0ba902b7", "order-1", "orders", at), consume("00f067aa0ba902b8", "order-1", "orders", at + 10));
    expect(messages()).toEqual([
      expect.objectContaining({
        kind: "message",
        service: "orders",
        state: "completed",
        queued_at: at + 2,
        processing_at: at + 10,
        finished_at: at + 40,
        error: null,
      }),
    ]);
    expect(steps().map((step) => `${step.name}: ${step.summary}`)).toEqual(["send: into orders, 2 ms", "process: done, 30 ms"]);
  });

  it("nacked and requeued: queued again, waiting for its redelivery, that delivery's error said; then acked on its redelivery: completed, the nack in its history", () => {
    const { feed, messages, steps } = aStore();
    feed(publish("00f067aa0ba902c1", "order-2", "orders", at));
    feed(consume("00f067aa0ba902c2", "order-2", "orders", at + 10, "nack called on message with requeue"));
    expect(messages()).toEqual([expect.objectContaining({ state: "queued", error: "nack called on message with requeue", finished_at: null })]);
    feed(consume("00f067aa0ba902c3", "order-2", "orders", at + 50));
    expect(messages()).toEqual([expect.objectContaining({ state: "completed", error: null })]);
    expect(steps().map((step) => step.summary)).toContain("failed: nack called on message with requeue (back in the queue), 30 ms");
  });

  it("nacked without saying (amqplib requeues by default), or its channel closed before the ack: back in the queue, queued, not over", () => {
    const { feed, messages } = aStore();
    feed(publish("00f067aa0ba902c6", "order-4", "orders", at), consume("00f067aa0ba902c7", "order-4", "orders", at + 10, "nack called on message"));
    feed(publish("00f067aa0ba902c8", "order-5", "orders", at), consume("00f067aa0ba902c9", "order-5", "orders", at + 10, "channel closed"));
    expect(messages().map((message) => [message.state, message.error])).toEqual([
      ["queued", "nack called on message"],
      ["queued", "channel closed"],
    ]);
  });

  it("nacked without requeue (dropped, or dead-lettered): failed, with what was called", () => {
    const { feed, messages } = aStore();
    feed(
      publish("00f067aa0ba902c4", "order-3", "orders", at),
      consume("00f067aa0ba902c5", "order-3", "orders", at + 10, "nack called on message without requeue"),
    );
    expect(messages()).toEqual([expect.objectContaining({ state: "failed", error: "nack called on message without requeue", finished_at: at + 40 })]);
  });

  it("a message without an id (published without messageId) is no lifecycle: counted, not guessed at", () => {
    const { store, feed, messages } = aStore();
    const span = publish("00f067aa0ba902d1", "x", "orders", at);
    delete span.attributes["messaging.message_id"];
    feed(span);
    expect(messages()).toEqual([]);
    expect(store.unmapped().map((row) => row.name)).toEqual(["publish <default>"]);
  });

  it("an older receive (messaging.operation receive, messaging.destination named): taken by a consumer, processing", () => {
    const { feed, messages } = aStore();
    feed(
      {
        id: "00f067aa0ba902e1",
        name: "billing send",
        kind: SPAN_KIND.producer,
        start: at,
        end: at + 1,
        attributes: { "messaging.system": "kafka", "messaging.destination": "billing", "messaging.message_id": "b-1" },
      },
      {
        id: "00f067aa0ba902e2",
        name: "billing receive",
        kind: SPAN_KIND.consumer,
        start: at + 5,
        end: at + 6,
        attributes: { "messaging.system": "kafka", "messaging.destination": "billing", "messaging.operation": "receive", "messaging.message_id": "b-1" },
      },
    );
    expect(messages()).toEqual([expect.objectContaining({ service: "billing", state: "processing", processing_at: at + 6 })]);
  });
});

describe("the current messaging conventions", () => {
  const at = Date.now() - 10_000;
  const base = { "messaging.system": "aws_sqs", "messaging.destination.name": "invoices", "messaging.message.id": "inv-7" };

  it("send, receive, process: queued, then processing once received, then completed by its process span", () => {
    const { feed, messages, steps } = aStore();
    feed({
      id: "00f067aa0ba90301",
      name: "send invoices",
      kind: SPAN_KIND.producer,
      start: at,
      end: at + 3,
      attributes: { ...base, "messaging.operation.type": "send" },
    });
    feed({
      id: "00f067aa0ba90302",
      name: "receive invoices",
      kind: SPAN_KIND.consumer,
      start: at + 10,
      end: at + 12,
      attributes: { ...base, "messaging.operation.type": "receive" },
    });
    expect(messages()).toEqual([expect.objectContaining({ service: "invoices", state: "processing", queued_at: at + 3, processing_at: at + 12 })]);
    feed({
      id: "00f067aa0ba90303",
      name: "process invoices",
      kind: SPAN_KIND.consumer,
      start: at + 12,
      end: at + 40,
      attributes: { ...base, "messaging.operation.type": "process" },
    });
    expect(messages()).toEqual([expect.objectContaining({ state: "completed", finished_at: at + 40 })]);
    expect(steps().map((step) => `${step.name}: ${step.summary}`)).toEqual([
      "send: into invoices, 3 ms",
      "receive: taken from invoices, 2 ms",
      "process: done, 28 ms",
    ]);
  });

  it("a failed receive took nothing: still queued, with its error", () => {
    const { feed, messages } = aStore();
    feed({
      id: "00f067aa0ba90311",
      name: "send invoices",
      kind: SPAN_KIND.producer,
      start: at,
      end: at + 3,
      attributes: { ...base, "messaging.operation.type": "send" },
    });
    feed({
      id: "00f067aa0ba90312",
      name: "receive invoices",
      kind: SPAN_KIND.consumer,
      start: at + 10,
      end: at + 12,
      attributes: { ...base, "messaging.operation.type": "receive", "error.type": "timeout" },
      status: { code: 2, message: "receive timed out" },
    });
    expect(messages()).toEqual([expect.objectContaining({ state: "queued", error: "receive timed out" })]);
  });
});
