import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import protobuf from "protobufjs";
import descriptor from "../../lib/telemetry/otlp/descriptor.json";
import type { Signal } from "../../lib/telemetry/records";

/**
 * A recorded scenario's exports as a client would send them now: every time in them (each
 * `...UnixNano` field) moved on by the same amount so the last one is `now`, so no test depends on
 * the day the exports were captured. Protobuf bodies are decoded, moved and encoded again (gzip
 * kept); JSON ones are moved in their text.
 */
export interface RecordedExport {
  file: string;
  signal: Signal;
  body: Buffer;
  contentType: "application/x-protobuf" | "application/json";
  gzip: boolean;
}

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const REQUEST = {
  traces: "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest",
  logs: "opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest",
  metrics: "opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest",
} as const;
const TIME = /UnixNano$/;

/** Every `...UnixNano` value in a decoded message, visited (as strings, how toObject gives 64-bit numbers). */
function visitTimes(value: unknown, visit: (nanos: bigint) => bigint | void): void {
  if (Array.isArray(value)) return value.forEach((item) => visitTimes(item, visit));
  if (value === null || typeof value !== "object" || Buffer.isBuffer(value) || value instanceof Uint8Array) return;
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (TIME.test(key) && typeof object[key] === "string") {
      const moved = visit(BigInt(object[key]));
      if (moved !== undefined) object[key] = moved.toString();
    } else visitTimes(object[key], visit);
  }
}

/** OTLP/JSON's times are strings of nanoseconds; moved in the text, so every other value stays as it was written. */
const JSON_TIME = /("[A-Za-z]*UnixNano":\s*)"(\d+)"/g;

type Loaded = { file: string; signal: Signal } & ({ protobuf: true; message: Record<string, unknown> } | { protobuf: false; text: string });

function load(folder: string, file: string): Loaded {
  const signal = /-(traces|logs|metrics)\./.exec(file)![1] as Signal;
  const raw = fs.readFileSync(path.join(folder, file));
  if (!file.endsWith(".pb.gz")) return { file, signal, protobuf: false, text: raw.toString("utf8") };
  const type = root.lookupType(REQUEST[signal]);
  return { file, signal, protobuf: true, message: type.toObject(type.decode(zlib.gunzipSync(raw)), { longs: String, bytes: Buffer }) };
}

function visitLoaded(item: Loaded, visit: (nanos: bigint) => bigint | void): void {
  if (item.protobuf) return visitTimes(item.message, visit);
  item.text = item.text.replace(JSON_TIME, (whole, key: string, nanos: string) => {
    const moved = visit(BigInt(nanos));
    return moved === undefined ? whole : `${key}"${moved}"`;
  });
}

/** A scenario folder's exports (files named `NNNN-<signal>.json` or `.pb.gz`), in order, times moved so the last is `now`. */
export function recordedExports(folder: string, now = Date.now()): RecordedExport[] {
  const loaded = fs
    .readdirSync(folder)
    .filter((file) => /-(traces|logs|metrics)\.(json|pb\.gz)$/.test(file))
    .sort()
    .map((file) => load(folder, file));
  let last = 0n;
  for (const item of loaded) visitLoaded(item, (nanos) => void (nanos > last && (last = nanos)));
  const shift = BigInt(now) * 1_000_000n - last;
  return loaded.map((item) => {
    // 0 is "not said" in OTLP (an observed time left out): it stays so.
    visitLoaded(item, (nanos) => (nanos === 0n ? nanos : nanos + shift));
    if (!item.protobuf) return { file: item.file, signal: item.signal, body: Buffer.from(item.text), contentType: "application/json", gzip: false };
    const type = root.lookupType(REQUEST[item.signal]);
    const body = zlib.gzipSync(type.encode(type.fromObject(item.message)).finish());
    return { file: item.file, signal: item.signal, body, contentType: "application/x-protobuf", gzip: true };
  });
}

/** Send exports to a receiver as their client does; each must be accepted. */
export async function sendExports(receiver: string, exports: readonly RecordedExport[]): Promise<void> {
  for (const item of exports) {
    const response = await fetch(`${receiver}/v1/${item.signal}`, {
      method: "POST",
      body: new Uint8Array(item.body),
      headers: { "content-type": item.contentType, ...(item.gzip && { "content-encoding": "gzip" }) },
    });
    if (response.status !== 200) throw new Error(`${item.file}: the receiver answered ${response.status}: ${await response.text()}`);
  }
}
