import { isUtf8 } from "node:buffer";
import protobuf from "protobufjs/light";
import { ReqwatchError } from "../../model/errors";
import { lazily } from "../../model/lazily";
import {
  SPAN_KINDS,
  type AttributeValue,
  type Attributes,
  type LogRecord,
  type MetricPoint,
  type Origin,
  type Signal,
  type SpanEvent,
  type SpanRecord,
  type TelemetryRecord,
} from "../records";
import descriptor from "./descriptor.json";

/**
 * OTLP export requests decoded into records (lib/telemetry/records.ts), from protobuf through the
 * official protocol definitions (opentelemetry-proto v1.11.0, compiled to descriptor.json by
 * scripts/otlp-descriptor.mjs) and protobufjs, or from OTLP's JSON encoding (the same message as JSON,
 * with ids in hex). The decoded message is read as it is, not copied into plain objects first: a
 * field counts only when the message holds it as its own (protobufjs keeps the defaults on the
 * prototype), ids are bytes or hex, and 64-bit numbers are protobufjs's Longs or JSON's strings.
 * What a request may hold is bounded here: a record past the limits is cut, not refused; a record
 * without a valid id or time is rejected and counted (the response's `partial_success`); a request
 * that does not decode at all is BAD_INPUT.
 */
// Built on first use: building them is a large part of a start, and most processes that load this module never decode.
const messages = lazily(() => protobuf.Root.fromJSON(descriptor as protobuf.INamespace));
/**
 * protobufjs reads each proto3 string through its strict UTF-8 check a character at a time, building
 * the string by concatenation; Node decodes it natively. The rule stays: a string that is not valid
 * UTF-8 refuses the export (Node puts U+FFFD where the bytes are not, so only then are they checked).
 */
class NodeBufferReader extends protobuf.BufferReader {
  override stringVerify(): string {
    const length = this.size();
    const start = this.pos;
    if (start + length > this.len) throw new RangeError(`index out of range: ${start} + ${length} > ${this.len}`);
    this.pos = start + length;
    const buf = this.buf as Buffer;
    const text = buf.toString("utf8", start, this.pos);
    if (text.includes("\uFFFD") && !isUtf8(buf.subarray(start, this.pos))) throw new Error("invalid UTF-8 in a string field");
    return text;
  }
}

const collector = (signal: Signal) => `opentelemetry.proto.collector.${signal === "traces" ? "trace" : signal}.v1`;
const REQUEST = { traces: "ExportTraceServiceRequest", logs: "ExportLogsServiceRequest", metrics: "ExportMetricsServiceRequest" } as const;
const RESPONSE = { traces: "ExportTraceServiceResponse", logs: "ExportLogsServiceResponse", metrics: "ExportMetricsServiceResponse" } as const;
const REJECTED = { traces: "rejectedSpans", logs: "rejectedLogRecords", metrics: "rejectedDataPoints" } as const;

/** Cut past these: a string value's length, attributes per record, items per array or map, nesting. */
export const LIMITS = { valueChars: 65_536, attributes: 128, items: 256, depth: 4, events: 128 } as const;

/**
 * Records one export may hold: an SDK's batch is 512 by default, a collector's 8,192. A few bytes
 * can hold a million empty records (gzip makes them fewer still); past this the export is refused
 * (TOO_LARGE, a 413) after counting them, before any is decoded, so one export never holds the
 * receiver (and the exporters behind it) for long.
 */
export const MAX_RECORDS_PER_EXPORT = 20_000;

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
  // Each record takes two bytes at least (its field's tag and length): a smaller body holds too few to count.
  if (encoding === "protobuf" && body.length > 2 * MAX_RECORDS_PER_EXPORT) refuseTooMany(signal, countProtobufRecords(signal, body));
  try {
    if (encoding === "protobuf") {
      message = messages()
        .lookupType(`${collector(signal)}.${REQUEST[signal]}`)
        .decode(new NodeBufferReader(body)) as unknown as Record<string, unknown>;
    } else {
      const parsed: unknown = JSON.parse(body.toString("utf8"));
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("the body is not a JSON object");
      message = parsed as Record<string, unknown>;
    }
  } catch (error) {
    throw new ReqwatchError("BAD_INPUT", `Not an OTLP ${REQUEST[signal]} in ${encoding === "protobuf" ? "protobuf" : "JSON"}: ${(error as Error).message}`);
  }
  if (encoding === "json") refuseTooMany(signal, countJsonRecords(signal, message));
  const out: Decoded = { records: [], rejected: 0, reason: null };
  const reject = (reason: string) => {
    out.rejected++;
    out.reason ??= reason;
  };
  for (const resourceBlock of list(own(message, signal === "traces" ? "resourceSpans" : signal === "logs" ? "resourceLogs" : "resourceMetrics"))) {
    const resource = attributes(own(record(own(resourceBlock, "resource")), "attributes"));
    for (const scopeBlock of list(own(resourceBlock, signal === "traces" ? "scopeSpans" : signal === "logs" ? "scopeLogs" : "scopeMetrics"))) {
      const scope = record(own(scopeBlock, "scope"));
      const origin: Origin = { resource, scope: { name: text(own(scope, "name")), version: text(own(scope, "version")) } };
      if (signal === "traces") for (const span of list(own(scopeBlock, "spans"))) pushSpan(out.records, origin, span, reject);
      else if (signal === "logs") for (const log of list(own(scopeBlock, "logRecords"))) pushLog(out.records, origin, log, reject);
      else for (const metric of list(own(scopeBlock, "metrics"))) pushMetric(out.records, origin, metric, reject);
    }
  }
  return out;
}

function refuseTooMany(signal: Signal, count: number): void {
  if (count > MAX_RECORDS_PER_EXPORT) {
    throw new ReqwatchError(
      "TOO_LARGE",
      `The export holds ${count > 10 * MAX_RECORDS_PER_EXPORT ? "more than " : ""}${Math.min(count, 10 * MAX_RECORDS_PER_EXPORT)} ${RECORD_NAMES[signal]}, over the ${MAX_RECORDS_PER_EXPORT} one export may hold: send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BLRP_MAX_EXPORT_BATCH_SIZE).`,
    );
  }
}

const RECORD_NAMES = { traces: "spans", logs: "log records", metrics: "data points" } as const;

/**
 * The records a protobuf export holds, counted by walking its wire format (field numbers from
 * opentelemetry-proto: resource block 1, scope block 2, then spans 2, log records 2, metrics 2
 * whose data 5 to 11 holds data points 1), without decoding one; stops counting once a scope
 * block takes it far past the limit. A body that does not walk is left to the decoder to refuse.
 */
function countProtobufRecords(signal: Signal, body: Buffer): number {
  const limit = 10 * MAX_RECORDS_PER_EXPORT;
  let count = 0;
  try {
    for (const resource of fields(body, 1)) {
      for (const scope of fields(resource, 2)) {
        if (signal !== "metrics") count += tally(fields(scope, 2));
        else for (const metric of fields(scope, 2)) for (const data of fields(metric, [5, 7, 9, 10, 11])) count += tally(fields(data, 1));
        if (count > limit) return count;
      }
    }
  } catch {
    return count;
  }
  return count;
}

function tally(items: Iterable<unknown>): number {
  let n = 0;
  for (const item of items) if (item) n++;
  return n;
}

/** The length-delimited fields of a protobuf message with these numbers, as their bytes. */
function* fields(message: Uint8Array, numbers: number | readonly number[]): Generator<Uint8Array> {
  const wanted = typeof numbers === "number" ? [numbers] : numbers;
  const reader = protobuf.Reader.create(message);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if ((tag & 7) === 2 && wanted.includes(tag >>> 3)) yield reader.bytes();
    else reader.skipType(tag & 7);
  }
}

function countJsonRecords(signal: Signal, message: Record<string, unknown>): number {
  let count = 0;
  for (const resourceBlock of list(own(message, signal === "traces" ? "resourceSpans" : signal === "logs" ? "resourceLogs" : "resourceMetrics"))) {
    for (const scopeBlock of list(own(resourceBlock, signal === "traces" ? "scopeSpans" : signal === "logs" ? "scopeLogs" : "scopeMetrics"))) {
      if (signal !== "metrics") count += list(own(scopeBlock, signal === "traces" ? "spans" : "logRecords")).length;
      else
        for (const metric of list(own(scopeBlock, "metrics")))
          for (const kind of ["gauge", "sum", "histogram", "exponentialHistogram", "summary"])
            count += list(own(record(own(metric, kind)), "dataPoints")).length;
    }
  }
  return count;
}

/** The success response, in the request's encoding: empty, or the partial success (what was rejected, and why). */
export function encodeResponse(signal: Signal, encoding: Encoding, rejected: number, reason: string | null): Buffer {
  const type = messages().lookupType(`${collector(signal)}.${RESPONSE[signal]}`);
  const body = rejected > 0 || reason ? { partialSuccess: { [REJECTED[signal]]: rejected, errorMessage: reason ?? "" } } : {};
  if (encoding === "json")
    return Buffer.from(JSON.stringify(rejected > 0 || reason ? { partialSuccess: { [REJECTED[signal]]: String(rejected), errorMessage: reason ?? "" } } : {}));
  return Buffer.from(type.encode(type.fromObject(body)).finish());
}

/** google.rpc.Status, which OTLP/HTTP answers a failure with: `code` (a gRPC code) and `message`. */
const STATUS = new protobuf.Type("Status").add(new protobuf.Field("code", 1, "int32")).add(new protobuf.Field("message", 2, "string"));
new protobuf.Root().define("google.rpc").add(STATUS);

export function encodeStatus(encoding: Encoding, code: number, message: string): Buffer {
  if (encoding === "json") return Buffer.from(JSON.stringify({ code, message }));
  return Buffer.from(STATUS.encode(STATUS.fromObject({ code, message })).finish());
}

function pushSpan(into: TelemetryRecord[], origin: Origin, span: Record<string, unknown>, reject: (reason: string) => void): void {
  const traceId = id(own(span, "traceId"), 16);
  const spanId = id(own(span, "spanId"), 8);
  const startMs = nanosToMs(own(span, "startTimeUnixNano"));
  if (!traceId || !spanId) return reject("a span without a valid trace or span id");
  if (startMs === null) return reject("a span without a start time");
  const status = record(own(span, "status"));
  const code = Number(own(status, "code") ?? 0);
  const events: SpanEvent[] = list(own(span, "events"))
    .slice(0, LIMITS.events)
    .map((event) => ({
      name: cut(text(own(event, "name"))),
      atMs: nanosToMs(own(event, "timeUnixNano")) ?? startMs,
      attributes: attributes(own(event, "attributes")),
    }));
  const kind = Number(own(span, "kind") ?? 0);
  const result: SpanRecord = {
    signal: "span",
    origin,
    traceId,
    spanId,
    parentSpanId: id(own(span, "parentSpanId"), 8),
    name: cut(text(own(span, "name"))),
    kind: SPAN_KINDS[Number.isInteger(kind) && kind >= 0 && kind < SPAN_KINDS.length ? kind : 0]!,
    startMs,
    endMs: nanosToMs(own(span, "endTimeUnixNano")) ?? startMs,
    status: { code: code === 2 ? "error" : code === 1 ? "ok" : "unset", message: cut(text(own(status, "message"))) },
    attributes: attributes(own(span, "attributes")),
    events,
  };
  into.push(result);
}

function pushLog(into: TelemetryRecord[], origin: Origin, log: Record<string, unknown>, reject: (reason: string) => void): void {
  const atMs = nanosToMs(own(log, "timeUnixNano")) ?? nanosToMs(own(log, "observedTimeUnixNano"));
  if (atMs === null) return reject("a log record without a time");
  const attrs = attributes(own(log, "attributes"));
  const eventName = text(own(log, "eventName")) || (typeof attrs["event.name"] === "string" ? attrs["event.name"] : "");
  const result: LogRecord = {
    signal: "log",
    origin,
    atMs,
    traceId: id(own(log, "traceId"), 16),
    spanId: id(own(log, "spanId"), 8),
    severityText: cut(text(own(log, "severityText"))),
    eventName: eventName || null,
    body: anyValue(own(log, "body"), 0),
    attributes: attrs,
  };
  into.push(result);
}

function pushMetric(into: TelemetryRecord[], origin: Origin, metric: Record<string, unknown>, reject: (reason: string) => void): void {
  const name = cut(text(own(metric, "name")));
  const unit = cut(text(own(metric, "unit")));
  const data = record(own(metric, "sum") ?? own(metric, "gauge") ?? own(metric, "histogram") ?? own(metric, "exponentialHistogram") ?? own(metric, "summary"));
  for (const point of list(own(data, "dataPoints"))) {
    const atMs = nanosToMs(own(point, "timeUnixNano"));
    if (atMs === null) {
      reject("a data point without a time");
      continue;
    }
    const count = int64(own(point, "count"));
    const [asDouble, asInt, sum] = [own(point, "asDouble"), own(point, "asInt"), own(point, "sum")];
    const value = (asDouble !== undefined ? number(asDouble) : asInt !== undefined ? int64(asInt) : number(sum)) ?? 0;
    const result: MetricPoint = { signal: "metric", origin, name, unit, atMs, value, count, attributes: attributes(own(point, "attributes")) };
    into.push(result);
  }
}

/** OTLP's KeyValue list as plain attributes: the first `LIMITS.attributes` keys, each value bounded. */
function attributes(value: unknown): Attributes {
  const out: Attributes = {};
  let n = 0;
  for (const entry of list(value)) {
    if (n >= LIMITS.attributes) break;
    const key = text(own(entry, "key"));
    if (!key || key in out) continue;
    out[cut(key)] = anyValue(own(entry, "value"), 0);
    n++;
  }
  return out;
}

/** OTLP's AnyValue (string, bool, int, double, bytes, array, key-value list) as a plain value. */
function anyValue(value: unknown, depth: number): AttributeValue {
  const v = record(value);
  const string = own(v, "stringValue");
  if (typeof string === "string") return cut(string);
  const bool = own(v, "boolValue");
  if (typeof bool === "boolean") return bool;
  const int = own(v, "intValue");
  if (int !== undefined) return int64(int);
  const double = own(v, "doubleValue");
  if (double !== undefined) return number(double);
  const bytes = own(v, "bytesValue");
  if (bytes instanceof Uint8Array) return cut(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"));
  if (typeof bytes === "string") return cut(bytes);
  if (depth >= LIMITS.depth) return null;
  const array = own(v, "arrayValue");
  if (array !== undefined)
    return list(own(record(array), "values"))
      .slice(0, LIMITS.items)
      .map((item) => anyValue(item, depth + 1));
  const kvlist = own(v, "kvlistValue");
  if (kvlist !== undefined) {
    const out: Record<string, AttributeValue> = {};
    for (const entry of list(own(record(kvlist), "values")).slice(0, LIMITS.items)) {
      const key = text(own(entry, "key"));
      if (key) out[cut(key)] = anyValue(own(entry, "value"), depth + 1);
    }
    return out;
  }
  return null;
}

/** protobufjs's 64-bit integer, as it decodes one (long.js's Long, or its own LongBits shape). */
interface Long64 {
  low: number;
  high: number;
  unsigned?: boolean;
}

function isLong(value: unknown): value is Long64 {
  return typeof value === "object" && value !== null && typeof (value as Long64).low === "number" && typeof (value as Long64).high === "number";
}

/**
 * Epoch nanoseconds (a decimal string, a number, or a 64-bit Long) as epoch ms, kept to the
 * microsecond; null when missing, zero or not a time.
 */
export function nanosToMs(value: unknown): number | null {
  if (typeof value === "string" && /^\d{1,20}$/.test(value)) {
    const nanos = BigInt(value);
    return nanos === 0n ? null : Number(nanos / 1000n) / 1000;
  }
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value / 1e6;
  if (isLong(value)) {
    const high = value.high >>> 0;
    const low = value.low >>> 0;
    if (high === 0 && low === 0) return null;
    // Whole microseconds without a BigInt: 2^32 is 1000 * 4294967 + 296, and each part stays exact in a double.
    return (high * 4_294_967 + Math.floor((high * 296 + low) / 1000)) / 1000;
  }
  return null;
}

/** A 64-bit integer (a Long, a decimal string or a number) as a number; null when it is not one. */
function int64(value: unknown): number | null {
  const n = isLong(value) ? (value.unsigned ? value.high >>> 0 : value.high) * 4_294_967_296 + (value.low >>> 0) : Number(value);
  return value !== undefined && Number.isFinite(n) ? n : null;
}

function number(value: unknown): number | null {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) ? n : null;
}

const HEX = /^[0-9a-f]+$/;
const ZEROS = /^0+$/;

/**
 * An id in hex: from protobuf's bytes, or as OTLP/JSON sends it (hex; some older exporters sent
 * base64). Null when missing, all zero or the wrong length.
 */
function id(value: unknown, bytes: number): string | null {
  let hex: string;
  if (value instanceof Uint8Array) {
    if (value.byteLength !== bytes) return null;
    hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex");
  } else if (typeof value === "string" && value !== "") {
    const lower = value.toLowerCase();
    hex = lower.length === bytes * 2 && HEX.test(lower) ? lower : Buffer.from(value, "base64").toString("hex");
    if (hex.length !== bytes * 2) return null;
  } else return null;
  return ZEROS.test(hex) ? null : hex;
}

/** A field the message holds as its own: present in the export (protobufjs's defaults sit on the prototype). */
function own(message: Record<string, unknown>, field: string): unknown {
  return Object.hasOwn(message, field) ? message[field] : undefined;
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
