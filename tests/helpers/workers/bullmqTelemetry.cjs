// What a BullMQ user sets up to trace their queues (bullmq-otel's README): an OpenTelemetry SDK
// exporting spans over OTLP (to OTEL_EXPORTER_OTLP_ENDPOINT, the dashboard's receiver here), and
// bullmq-otel's BullMQOtel passed as the Queue's and the Worker's `telemetry`. The client's
// modules come from the folder installedClient made (BULLMQ_CLIENT).
const path = require("node:path");
const { createRequire } = require("node:module");

const client = createRequire(path.join(process.env.BULLMQ_CLIENT, "node_modules", "index.js"));
const { NodeTracerProvider, BatchSpanProcessor } = client("@opentelemetry/sdk-trace-node");
const { resourceFromAttributes } = client("@opentelemetry/resources");
const { OTLPTraceExporter } = client(process.env.OTLP_JSON === "1" ? "@opentelemetry/exporter-trace-otlp-http" : "@opentelemetry/exporter-trace-otlp-proto");
const { BullMQOtel } = client("bullmq-otel");
const bullmq = client("bullmq");

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": process.env.SERVICE_NAME ?? "orders" }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();

const connection = { host: "127.0.0.1", port: Number(process.env.REDIS_PORT) };
const telemetry = new BullMQOtel({ tracerName: "orders", version: "1.0.0" });

module.exports = { bullmq, provider, connection, telemetry };
