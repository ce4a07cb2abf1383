// What an amqplib user sets up to trace RabbitMQ: an OpenTelemetry SDK exporting spans over OTLP (to
// OTEL_EXPORTER_OTLP_ENDPOINT, the dashboard's receiver here), a context manager and the W3C
// propagator (the publish span's context travels in the message's headers), and the amqplib
// instrumentation, registered before amqplib is loaded. The modules come from the folder
// installedClient made (AMQP_CLIENT).
const path = require("node:path");
const { createRequire } = require("node:module");

const client = createRequire(path.join(process.env.AMQP_CLIENT, "node_modules", "index.js"));
const api = client("@opentelemetry/api");
const { TracerProvider, BatchSpanProcessor } = client("@opentelemetry/sdk-trace");
const { AsyncLocalStorageContextManager } = client("@opentelemetry/context-async-hooks");
const { W3CTraceContextPropagator } = client("@opentelemetry/core");
const { resourceFromAttributes } = client("@opentelemetry/resources");
const { OTLPTraceExporter } = client("@opentelemetry/exporter-trace-otlp-proto");
const { registerInstrumentations } = client("@opentelemetry/instrumentation");
const { AmqplibInstrumentation } = client("@opentelemetry/instrumentation-amqplib");

const provider = new TracerProvider({
  resource: resourceFromAttributes({ "service.name": process.env.SERVICE_NAME ?? "shop" }),
  // The SDK's 3.x processor takes its options as one object and reads no OTEL_BSP_* variable.
  spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), scheduledDelayMillis: Number(process.env.OTEL_BSP_SCHEDULE_DELAY ?? 5000) })],
});
api.trace.setGlobalTracerProvider(provider);
api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
registerInstrumentations({ instrumentations: [new AmqplibInstrumentation()] });

const amqplib = client("amqplib");
const url = `amqp://127.0.0.1:${process.env.AMQP_PORT}`;

module.exports = { amqplib, provider, url };
