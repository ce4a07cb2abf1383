import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import type { Signal } from "../../lib/telemetry/records";

/** Claude Code 2.1.332's own exports, captured from the real CLI against a mock of the Messages API: a scenario's, in the order they were sent. */
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/claude-code-2.1.332");

export interface CapturedExport {
  signal: Signal;
  /** As the receiver reads it: decompressed. */
  body: Buffer;
  encoding: "json" | "protobuf";
}

export function capturedExports(scenario: string): CapturedExport[] {
  return fs
    .readdirSync(path.join(FIXTURES, scenario))
    .sort()
    .map((file) => {
      const signal = /-(traces|logs|metrics)\./.exec(file)![1] as Signal;
      const raw = fs.readFileSync(path.join(FIXTURES, scenario, file));
      return file.endsWith(".pb.gz") ? { signal, body: zlib.gunzipSync(raw), encoding: "protobuf" as const } : { signal, body: raw, encoding: "json" as const };
    });
}
