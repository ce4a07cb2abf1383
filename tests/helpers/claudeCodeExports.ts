import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import type { Signal } from "../../lib/telemetry/records";
import type { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";

/** No secret patterns: what the tests send is kept as sent. */
export const NO_REDACTION = { raw: [], patterns: [] };

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
    ingestExport(store, NO_REDACTION, item.signal, decoded, now);
  }
}

/** A model call of an app using an instrumented SDK (no cost said), as the OTLP/JSON body it sends: a GenAI span in conversation `conversation`, from `service`. */
export function aGenAiExport(conversation: string, at: number, service = "support-bot"): object {
  const attributes = Object.entries({
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "claude-haiku-4-5",
    "gen_ai.conversation.id": conversation,
    "gen_ai.usage.input_tokens": 50,
    "gen_ai.usage.output_tokens": 5,
  }).map(([key, value]) => ({
    key,
    value: typeof value === "number" ? { intValue: value } : { stringValue: value },
  }));
  const span = {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    name: "chat claude-haiku-4-5",
    kind: 3,
    startTimeUnixNano: `${at - 400}000000`,
    endTimeUnixNano: `${at}000000`,
    attributes,
    status: {},
  };
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: service } }] },
        scopeSpans: [{ scope: { name: "@anthropic-ai/sdk" }, spans: [span] }],
      },
    ],
  };
}
