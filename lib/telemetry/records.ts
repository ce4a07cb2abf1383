/**
 * What the OTLP receiver hands on, whatever the encoding it came in (protobuf or JSON): one record
 * per span, log record and metric data point, each with the resource and scope it came from, ids
 * in hex, times in epoch ms, attributes as plain values. The mapping (lib/telemetry/mapping) reads
 * nothing else.
 */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

export interface Origin {
  /** The resource's attributes: `service.name`, `service.version`, ... */
  resource: Attributes;
  scope: { name: string; version: string };
}

export interface SpanEvent {
  name: string;
  atMs: number;
  attributes: Attributes;
}

export const SPAN_KINDS = ["unspecified", "internal", "server", "client", "producer", "consumer"] as const;
type SpanKind = (typeof SPAN_KINDS)[number];

export interface SpanRecord {
  signal: "span";
  origin: Origin;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: SpanKind;
  startMs: number;
  endMs: number;
  /** OTLP's status: unset (the default), ok, or error with its message. */
  status: { code: "unset" | "ok" | "error"; message: string };
  attributes: Attributes;
  events: SpanEvent[];
}

export interface LogRecord {
  signal: "log";
  origin: Origin;
  /** When it happened (the record's time, else when it was observed). */
  atMs: number;
  traceId: string | null;
  spanId: string | null;
  severityText: string;
  /** The event's name: the record's own `event_name`, else its `event.name` attribute. */
  eventName: string | null;
  body: AttributeValue;
  attributes: Attributes;
}

export interface MetricPoint {
  signal: "metric";
  origin: Origin;
  name: string;
  unit: string;
  atMs: number;
  /** A sum's or gauge's value; a histogram's sum (count in `count`). */
  value: number;
  count: number | null;
  attributes: Attributes;
}

export type TelemetryRecord = SpanRecord | LogRecord | MetricPoint;

/** The three OTLP signals, as their paths name them (`/v1/traces`). */
export type Signal = "traces" | "logs" | "metrics";

/** A string attribute, or undefined. */
export function stringAttr(attributes: Attributes, key: string): string | undefined {
  const value = attributes[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A number attribute (OTLP sends some counts as text: `"44"`), or undefined. */
export function numberAttr(attributes: Attributes, key: string): number | undefined {
  const value = attributes[key];
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

/** A boolean attribute (`true`, or `"true"` as text), or undefined. */
export function booleanAttr(attributes: Attributes, key: string): boolean | undefined {
  const value = attributes[key];
  if (typeof value === "boolean") return value;
  if (value === "true" || value === "false") return value === "true";
  return undefined;
}
