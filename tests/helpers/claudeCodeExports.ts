import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import type { Signal } from "../../lib/telemetry/records";
import type { TelemetryStore } from "../../lib/telemetry/telemetryStore";

/** Claude Code 2.1.332's own exports, captured from the real CLI against a mock of the Messages API (tests/fixtures/otlp), one folder per scenario. */
export const CLAUDE_CODE_FIXTURES = path.resolve(__dirname, "../fixtures/otlp/claude-code-2.1.332");

export interface Export {
  signal: Signal;
  body: Buffer;
  encoding: "json" | "protobuf";
}

/** A scenario's exports in the order Claude Code sent them, bodies as the receiver decodes them (gzip undone). */
export function exportsOf(scenario: string): Export[] {
  return fs
    .readdirSync(path.join(CLAUDE_CODE_FIXTURES, scenario))
    .sort()
    .map((file) => {
      const signal = /-(traces|logs|metrics)\./.exec(file)![1] as Signal;
      const raw = fs.readFileSync(path.join(CLAUDE_CODE_FIXTURES, scenario, file));
      return file.endsWith(".pb.gz") ? { signal, body: zlib.gunzipSync(raw), encoding: "protobuf" as const } : { signal, body: raw, encoding: "json" as const };
    });
}

/** Feed exports to a store as its receiver would, received at `now`. */
export function feed(store: TelemetryStore, exports: readonly Export[], now = Date.now()): void {
  for (const item of exports) {
    const decoded = decodeExport(item.signal, item.encoding, item.body);
    store.ingest(item.signal, decoded.records, decoded.rejected, now);
  }
}
