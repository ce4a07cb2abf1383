// The OTLP protocol as the receiver decodes it: lib/telemetry/otlp/descriptor.json, made by
// protobufjs from the official .proto files vendored beside it (opentelemetry-proto v1.11.0,
// lib/telemetry/otlp/proto). Run it after replacing those files; a test fails while the two differ.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PROTO = path.join(ROOT, "lib/telemetry/otlp/proto");
const SERVICES = ["trace", "logs", "metrics"].map(
  (signal) => `opentelemetry/proto/collector/${signal}/v1/${signal === "trace" ? "trace" : signal}_service.proto`,
);

export function otlpDescriptor() {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTO, target);
  root.loadSync(SERVICES, { keepCase: false });
  return `${JSON.stringify(root.toJSON(), null, 1)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(path.join(ROOT, "lib/telemetry/otlp/descriptor.json"), otlpDescriptor());
}
