import protobuf from "protobufjs/light";
import { ReqwatchError } from "../../model/errors";
import { lazily } from "../../model/lazily";
import { SPAN_KINDS, type AttributeValue, type Attributes, type LogRecord, type MetricPoint, type Origin, type Signal, type SpanEvent, type SpanRecord, type TelemetryRecord } from "../records";
import descriptor from "./descriptor.json";

/**
 * OTLP export requests decoded into records (lib/telemetry/records.ts), from protobuf through the
 * official protocol definitions (opentelemetry-proto v1.11.0, compiled to descriptor.json by
 * scripts/otlp-descriptor.mjs) and protobufjs, or from OTLP's JSON encoding (the same message as JSON,
 * with ids in hex). What a request may hold is bounded here: a record past the limits is cut, not
 * refused; a record without a valid id or time is rejected and counted (the response's
 * `partial_success`); a request that does not decode at all is BAD_INPUT.
 */
// Built on first use: building them is a large part of a start, and most processes that load this module never decode.
const messages = lazily(() => protobuf.Root.fromJSON(descriptor as protobuf.INamespace));
const collector = (signal: Signal) => `opentelemetry.proto.collector.${signal === "traces" ? "trace" : signal}.v1`;
const REQUEST = { traces: "ExportTraceServiceRequest", logs: "ExportLogsServiceRequest", metrics: "ExportMetricsServiceRequest" } as const;
const RESPONSE = { traces: "ExportTraceServiceResponse", logs: "ExportLogsServiceResponse", metrics: "ExportMetricsServiceResponse" } as const;
const REJECTED = { traces: "rejectedSpans", logs: "rejectedLogRecords", metrics: "rejectedDataPoints" } as const;

/** Cut past these: a string value's length, attributes per record, items per array or map, nesting. */
export const LIMITS = { valueChars: 65_536, attributes: 128, items: 256, depth: 4, events: 128 } as const;

export type Encoding = "protobuf" | "json";

export interface Decoded {
  records: TelemetryRecord[];
  /** Records refused (no valid ids, no time), and why, for the response's partial_success. */
  rejected: number;
  reason: string | null;
}

/** Decode one export request's body (already decompressed). */
export function decodeExport(signal: Signal, encoding: Encoding, body: Buffer): Decoded {
  let message: Record<string, unknown>;
  try {
    if (encoding === "protobuf") {
      const type = messages().lookupType(`${collector(signal)}.${REQUEST[signal]}`);
      message = type.toObject(type.decode(body), { longs: String, enums: Number, bytes: String, defaults: false }) as Record<string, unknown>;
    } else {
      const parsed: unknown = JSON.parse(body.toString("utf8"));
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("the body is not a JSON object");
      message = parsed as Record<string, unknown>;
    }
  } catch (error) {
    throw new ReqwatchError("BAD_INPUT", `Not an OTLP ${REQUEST[signal]} in ${encoding === "protobuf" ? "protobuf" : "JSON"}: ${(error as Error).message}`);
  }
  const out: Decoded = { records: [], rejected: 0, reason: null };
  const reject = (reason: string) => {
    out.rejected++;
    out.reason ??= reason;
  };
  const ids = encoding === "protobuf" ? fromBase64 : fromHexOrBase64;
  for (const resourceBlock of list(message[signal === "traces" ? "resourceSpans" : signal === "logs" ? "resourceLogs" : "resourceMetrics"])) {
    const resource = attributes(record(resourceBlock.resource).attributes);
    for (const scopeBlock of list(resourceBlock[signal === "traces" ? "scopeSpans" : signal === "logs" ? "scopeLogs" : "scopeMetrics"])) {
      const scope = record(scopeBlock.scope);
      const origin: Origin = { resource, scope: { name: text(scope.name), version: text(scope.version) } };
      if (signal === "traces") for (const span of list(scopeBlock.spans)) pushSpan(out.records, origin, span, ids, reject);
      else if (signal === "logs") for (const log of list(scopeBlock.logRecords)) pushLog(out.records, origin, log, ids, reject);
      else for (const metric of list(scopeBlock.metrics)) pushMetric(out.records, origin, metric, reject);
    }
  }
  return out;
}

/** The success response, in the request's encoding: empty, or the partial success (what was rejected, and why). */
export function encodeResponse(signal: Signal, encoding: Encoding, rejected: number, reason: string | null): Buffer {
  const type = messages().lookupType(`${collector(signal)}.${RESPONSE[signal]}`);
  const body = rejected > 0 || reason ? { partialSuccess: { [REJECTED[signal]]: rejected, errorMessage: reason ?? "" } } : {};
  if (encoding === "json") return Buffer.from(JSON.stringify(rejected > 0 || reason ? { partialSuccess: { [REJECTED[signal]]: String(rejected), errorMessage: reason ?? "" } } : {}));
  return Buffer.from(type.encode(type.fromObject(body)).finish());
}

/** google.rpc.Status, which OTLP/HTTP answers a failure with: `code` (a gRPC code) and `message`. */
const STATUS = new protobuf.Type("Status").add(new protobuf.Field("code", 1, "int32")).add(new protobuf.Field("message", 2, "string"));
new protobuf.Root().define("google.rpc").add(STATUS);

export function encodeStatus(encoding: Encoding, code: number, message: string): Buffer {
  if (encoding === "json") return Buffer.from(JSON.stringify({ code, message }));
  return Buffer.from(STATUS.encode(STATUS.fromObject({ code, message })).finish());
}

type Ids = (value: unknown, bytes: number) => string | null;

function pushSpan(into: TelemetryRecord[], origin: Origin, span: Record<string, unknown>, ids: Ids, reject: (reason: string) => void): void {
  const traceId = ids(span.traceId, 16);
  const spanId = ids(span.spanId, 8);
  const startMs = nanosToMs(span.startTimeUnixNano);
  if (!traceId || !spanId) return reject("a span without a valid trace or span id");
  if (startMs === null) return reject("a span without a start time");
  const status = record(span.status);
  const code = Number(status.code ?? 0);
  const events: SpanEvent[] = list(span.events)
    .slice(0, LIMITS.events)
    .map((event) => ({ name: cut(text(event.name)), atMs: nanosToMs(event.timeUnixNano) ?? startMs, attributes: attributes(event.attributes) }));
  const kind = Number(span.kind ?? 0);
  const result: SpanRecord = {
    signal: "span",
    origin,
    traceId,
    spanId,
    parentSpanId: ids(span.parentSpanId, 8),
    name: cut(text(span.name)),
    kind: SPAN_KINDS[Number.isInteger(kind) && kind >= 0 && kind < SPAN_KINDS.length ? kind : 0]!,
    startMs,
    endMs: nanosToMs(span.endTimeUnixNano) ?? startMs,
    status: { code: code === 2 ? "error" : code === 1 ? "ok" : "unset", message: cut(text(status.message)) },
    attributes: attributes(span.attributes),
    events,
  };
  into.push(result);
}

function pushLog(into: TelemetryRecord[], origin: Origin, log: Record<string, unknown>, ids: Ids, reject: (reason: string) => void): void {
  const atMs = nanosToMs(log.timeUnixNano) ?? nanosToMs(log.observedTimeUnixNano);
  if (atMs === null) return reject("a log record without a time");
  const attrs = attributes(log.attributes);
  const eventName = text(log.eventName) || (typeof attrs["event.name"] === "string" ? attrs["event.name"] : "");
  const result: LogRecord = {
    signal: "log",
    origin,
    atMs,
    traceId: ids(log.traceId, 16),
    spanId: ids(log.spanId, 8),
    severityText: cut(text(log.severityText)),
    eventName: eventName || null,
    body: anyValue(log.body, 0),
    attributes: attrs,
  };
  into.push(result);
}

function pushMetric(into: TelemetryRecord[], origin: Origin, metric: Record<string, unknown>, reject: (reason: string) => void): void {
  const name = cut(text(metric.name));
  const unit = cut(text(metric.unit));
  const data = record(metric.sum ?? metric.gauge ?? metric.histogram ?? metric.exponentialHistogram ?? metric.summary);
  for (const point of list(data.dataPoints)) {
    const atMs = nanosToMs(point.timeUnixNano);
    if (atMs === null) {
      reject("a data point without a time");
      continue;
    }
    const count = point.count === undefined ? null : Number(point.count);
    const value = point.asDouble !== undefined ? Number(point.asDouble) : point.asInt !== undefined ? Number(point.asInt) : point.sum !== undefined ? Number(point.sum) : 0;
    const result: MetricPoint = { signal: "metric", origin, name, unit, atMs, value: Number.isFinite(value) ? value : 0, count: count !== null && Number.isFinite(count) ? count : null, attributes: attributes(point.attributes) };
    into.push(result);
  }
}

/** OTLP's KeyValue list as plain attributes: the first `LIMITS.attributes` keys, each value bounded. */
function attributes(value: unknown): Attributes {
  const out: Attributes = {};
  let n = 0;
  for (const entry of list(value)) {
    if (n >= LIMITS.attributes) break;
    const key = text(entry.key);
    if (!key || key in out) continue;
    out[cut(key)] = anyValue(entry.value, 0);
    n++;
  }
  return out;
}

/** OTLP's AnyValue (string, bool, int, double, bytes, array, key-value list) as a plain value. */
function anyValue(value: unknown, depth: number): AttributeValue {
  const v = record(value);
  if (typeof v.stringValue === "string") return cut(v.stringValue);
  if (typeof v.boolValue === "boolean") return v.boolValue;
  if (v.intValue !== undefined) {
    const n = Number(v.intValue);
    return Number.isFinite(n) ? n : null;
  }
  if (v.doubleValue !== undefined) {
    const n = Number(v.doubleValue);
    return Number.isFinite(n) ? n : null;
  }
  if (typeof v.bytesValue === "string") return cut(v.bytesValue);
  if (depth >= LIMITS.depth) return null;
  if (v.arrayValue !== undefined) return list(record(v.arrayValue).values).slice(0, LIMITS.items).map((item) => anyValue(item, depth + 1));
  if (v.kvlistValue !== undefined) {
    const out: Record<string, AttributeValue> = {};
    for (const entry of list(record(v.kvlistValue).values).slice(0, LIMITS.items)) {
      const key = text(entry.key);
      if (key) out[cut(key)] = anyValue(entry.value, depth + 1);
    }
    return out;
  }
  return null;
}

/** Epoch nanoseconds (a decimal string, or a number) as epoch ms; null when missing, zero or not a time. */
export function nanosToMs(value: unknown): number | null {
  if (typeof value === "string" && /^\d{1,20}$/.test(value)) {
    const nanos = BigInt(value);
    return nanos === 0n ? null : Number(nanos / 1000n) / 1000;
  }
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value / 1e6;
  return null;
}

const HEX = /^[0-9a-f]+$/;

/** An id as protobufjs gives bytes (base64), in hex; null when missing, all zero or the wrong length. */
function fromBase64(value: unknown, bytes: number): string | null {
  if (typeof value !== "string" || value === "") return null;
  const hex = Buffer.from(value, "base64").toString("hex");
  return hex.length === bytes * 2 && !/^0+$/.test(hex) ? hex : null;
}

/** An id as OTLP/JSON sends it (hex; some older exporters sent base64). */
function fromHexOrBase64(value: unknown, bytes: number): string | null {
  if (typeof value !== "string" || value === "") return null;
  const lower = value.toLowerCase();
  if (lower.length === bytes * 2 && HEX.test(lower)) return /^0+$/.test(lower) ? null : lower;
  return fromBase64(value, bytes);
}

function cut(value: string): string {
  return value.length > LIMITS.valueChars ? `${value.slice(0, LIMITS.valueChars)}…` : value;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null && !Array.isArray(item)) : [];
}
