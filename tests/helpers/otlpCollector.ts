import http from "node:http";
import type { AddressInfo } from "node:net";
// The official OTLP protocol definitions, compiled (protobufjs), as an older @opentelemetry/otlp-transformer ships them.
import root from "otlp-proto-definitions/build/src/generated/root";

const proto = (
  root as unknown as {
    opentelemetry: {
      proto: {
        collector: Record<string, { v1: Record<string, { decode(b: Uint8Array): unknown; toObject(m: unknown, o: object): Record<string, unknown> }> }>;
      };
    };
  }
).opentelemetry.proto.collector;

/**
 * A protobuf export decoded into the shape of OTLP's JSON encoding (ids in hex, integers as
 * numbers), so one set of assertions reads both.
 */
function decodeProtobuf(url: string, raw: Buffer): unknown {
  const type = url === "/v1/metrics" ? proto.metrics!.v1.ExportMetricsServiceRequest! : proto.trace!.v1.ExportTraceServiceRequest!;
  const object = type.toObject(type.decode(raw), { longs: String, enums: Number, bytes: Array, defaults: false });
  const normalize = (value: unknown, key = ""): unknown => {
    if (Array.isArray(value) && /Id$/.test(key)) return Buffer.from(value as number[]).toString("hex");
    if (Array.isArray(value)) return value.map((item) => normalize(item));
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === "intValue" || k === "asInt" || k === "count" ? Number(v) : normalize(v, k)]));
    return value;
  };
  return normalize(object);
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  events?: { name: string }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
}

/** A metric as OTLP's JSON encoding has it (the fields the tests read). */
export interface OtlpMetric {
  name: string;
  sum?: { dataPoints: { asInt?: number; asDouble?: number; attributes: OtlpSpan["attributes"] }[] };
  gauge?: { dataPoints: { asInt?: number; asDouble?: number; attributes: OtlpSpan["attributes"] }[] };
  histogram?: { dataPoints: { count: number; sum?: number; attributes: OtlpSpan["attributes"] }[] };
}

/** An OTLP/HTTP receiver (JSON encoding): every span and metric it was sent, and a switch that makes it answer 503, as a collector that is down. */
export async function aCollector() {
  const requests: { resourceSpans: { resource: { attributes: OtlpSpan["attributes"] }; scopeSpans: { spans: OtlpSpan[] }[] }[] }[] = [];
  const metricRequests: { resourceMetrics: { scopeMetrics: { metrics: OtlpMetric[] }[] }[] }[] = [];
  const encodings: string[] = [];
  let lastHeaders: http.IncomingHttpHeaders = {};
  let down = false;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (down || (request.url !== "/v1/traces" && request.url !== "/v1/metrics")) {
        response.writeHead(503).end();
        return;
      }
      const type = request.headers["content-type"];
      if (type !== "application/json" && type !== "application/x-protobuf") {
        response.writeHead(415).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const body = type === "application/json" ? JSON.parse(raw.toString("utf8")) : decodeProtobuf(request.url!, raw);
      encodings.push(type);
      lastHeaders = request.headers;
      if (request.url === "/v1/metrics") metricRequests.push(body);
      else requests.push(body);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  return {
    url,
    spans: () => requests.flatMap((body) => body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))),
    /** Every metric of every export, newest last. */
    metrics: () => metricRequests.flatMap((body) => body.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))),
    resources: () => requests.flatMap((body) => body.resourceSpans.map((r) => r.resource)),
    /** The headers of the latest export received. */
    headers: () => lastHeaders,
    /** The content type of every export received. */
    encodings: () => [...encodings],
    setDown: (value: boolean) => void (down = value),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The exporters keep their connections alive: close them rather than wait for their timeout.
        server.closeAllConnections();
      }),
  };
}

export const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : (Object.values(value)[0] as unknown);
};
export const waitFor = async (check: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
