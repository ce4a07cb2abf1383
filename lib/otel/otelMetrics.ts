import { SpanKind } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { OTLPMetricExporter as OtlpJsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as OtlpProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import type { Resource } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { otlpEndpoint, otlpProtocol } from "./protocol";
import type { Reader } from "../roles/reader";

/** The OTLP metric exporter the standard variables describe (OTEL_EXPORTER_OTLP_(METRICS_)PROTOCOL, ENDPOINT, HEADERS). */
function otlpMetricExporterFromEnv(env: NodeJS.ProcessEnv = process.env): PushMetricExporter {
  otlpEndpoint("METRICS", env);
  return otlpProtocol("METRICS", env) === "http/json" ? new OtlpJsonMetricExporter() : new OtlpProtoMetricExporter();
}

/** Seconds, as OpenTelemetry's duration histograms are kept; buckets from 5 ms to 1 h. */
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

interface OtelMetrics {
  /** Count what spans sent for the first time say (an attempt ended: its outcome, run time, queue wait, a retry), and new dropped late results. */
  recordSpans(spans: readonly { span: ReadableSpan; previousEvents: number | null }[]): void;
  shutdown(): Promise<void>;
}

/**
 * The metrics beside the traces: requests waiting and running and stuck (gauges, read from the
 * index when the reader collects), attempts ended by outcome, retries and dropped late results
 * (counters), the queue wait and the processing time (histograms, seconds), each with the
 * workspace as `messaging.destination.name`. Counters count from this exporter's start, what it
 * sees in the spans it sends (a span sent again after a restart may be counted twice).
 */
/** The exporter, with its failures reported (the SDK's reader only logs them to its own diagnostics, off by default). */
function reporting(exporter: PushMetricExporter, onError: (error: Error) => void): PushMetricExporter {
  return {
    export: (metrics, done) =>
      exporter.export(metrics, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) onError(result.error ?? new Error("the collector refused the metrics"));
        done(result);
      }),
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
    ...(exporter.selectAggregationTemporality && { selectAggregationTemporality: exporter.selectAggregationTemporality.bind(exporter) }),
    ...(exporter.selectAggregation && { selectAggregation: exporter.selectAggregation.bind(exporter) }),
  };
}

export function startOtelMetrics(
  reader: Reader,
  resource: Resource,
  options: { exporter?: PushMetricExporter; intervalMs?: number; onError?: (error: Error) => void; observing?: () => boolean } = {},
): OtelMetrics {
  // An exporter that waits for another reports no gauges: the one exporting does.
  const observing = options.observing ?? (() => true);
  const intervalMs = options.intervalMs ?? (Number(process.env.OTEL_METRIC_EXPORT_INTERVAL) || 60_000);
  const exporter = reporting(options.exporter ?? otlpMetricExporterFromEnv(), options.onError ?? (() => {}));
  const provider = new MeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: intervalMs, exportTimeoutMillis: Math.min(30_000, intervalMs) })],
  });
  const meter = provider.getMeter("reqwatch");
  const attempts = meter.createCounter("reqwatch.attempts", { description: "Attempts ended, by outcome (completed, failed, timed out, released, stopped)" });
  const retries = meter.createCounter("reqwatch.retries", { description: "Attempts after a request's first" });
  const dropped = meter.createCounter("reqwatch.deliveries.dropped", { description: "Late results fenced off by a newer claim" });
  const processing = meter.createHistogram("messaging.process.duration", {
    unit: "s",
    description: "Each attempt, from its claim to its end",
    advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
  });
  const wait = meter.createHistogram("reqwatch.queue.wait", {
    unit: "s",
    description: "From entering queued to the claim",
    advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
  });
  meter.createObservableGauge("reqwatch.requests", { description: "Requests queued and processing, now" }).addCallback((result) => {
    if (!observing()) return;
    for (const queue of reader.queueStats()) {
      result.observe(queue.queued, { "messaging.destination.name": queue.workspace, state: "queued" });
      result.observe(queue.processing, { "messaging.destination.name": queue.workspace, state: "processing" });
    }
  });
  meter.createObservableGauge("reqwatch.requests.stuck", { description: "Requests the stuck monitor's rules flag, now" }).addCallback((result) => {
    if (!observing()) return;
    const byWorkspace = new Map<string, number>();
    for (const stuck of reader.stuck()) byWorkspace.set(stuck.workspace, (byWorkspace.get(stuck.workspace) ?? 0) + 1);
    for (const [workspace, n] of byWorkspace) result.observe(n, { "messaging.destination.name": workspace });
  });
  return {
    recordSpans(spans) {
      for (const { span, previousEvents } of spans) {
        if (span.kind !== SpanKind.CONSUMER) continue;
        const workspace = { "messaging.destination.name": String(span.attributes["messaging.destination.name"]) };
        const newDrops = span.events.length - (previousEvents ?? 0);
        if (newDrops > 0) dropped.add(newDrops, workspace);
        if (previousEvents !== null) continue;
        attempts.add(1, { ...workspace, "reqwatch.outcome": String(span.attributes["reqwatch.outcome"]) });
        if (Number(span.attributes["reqwatch.attempt"]) > 1) retries.add(1, workspace);
        processing.record(span.duration[0] + span.duration[1] / 1e9, workspace);
        wait.record(Number(span.attributes["reqwatch.wait_ms"] ?? 0) / 1000, workspace);
      }
    },
    shutdown: () => provider.shutdown(),
  };
}
