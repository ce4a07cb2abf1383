// Claude Code-like OTLP exports (protobuf) in any number: a stream of turns, each a prompt, three
// model calls, two tools and an answer, 200 log records or spans an export. The telemetry bench
// sends them to the receiver; the store's retention test fills a store with them.
import fs from "node:fs";
import protobuf from "protobufjs/light.js";

const descriptor = JSON.parse(fs.readFileSync(new URL("../lib/telemetry/otlp/descriptor.json", import.meta.url), "utf8"));
const root = protobuf.Root.fromJSON(descriptor);
export const LogsRequest = root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest");
export const TracesRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
export const PER_EXPORT = 200;
const hex = (n, chars) => n.toString(16).padStart(chars, "0");
const nanos = (ms) => String(BigInt(Math.round(ms)) * 1_000_000n);
const attr = (key, value) => ({
  key,
  value: typeof value === "number" ? (Number.isInteger(value) ? { intValue: value } : { doubleValue: value }) : { stringValue: String(value) },
});
const RESOURCE = { attributes: [attr("service.name", "claude-code"), attr("service.version", "2.1.332")] };

/** Export `n` (of a stream of turns, each: a prompt, three calls, two tools, an answer) as protobuf: logs on even exports, spans on odd ones. */
export function exportBody(n) {
  const now = Date.now();
  if (n % 2 === 0) {
    const records = [];
    for (let i = 0; i < PER_EXPORT; i++) {
      const step = n * PER_EXPORT + i;
      const turn = Math.floor(step / 8);
      const kind = ["user_prompt", "api_request", "tool_result", "api_request", "tool_result", "api_request", "assistant_response", "api_error"][step % 8];
      const attributes = [
        attr("session.id", `session-${Math.floor(turn / 20)}`),
        attr("prompt.id", `prompt-${turn}`),
        attr("event.name", kind),
        attr("event.sequence", step),
        attr("model", "claude-sonnet-4-5"),
      ];
      if (kind === "user_prompt") attributes.push(attr("prompt", `fix the failing test number ${turn} in the parser module`));
      if (kind === "api_request")
        attributes.push(
          attr("request_id", `req-${step}`),
          attr("input_tokens", 1200),
          attr("output_tokens", 300),
          attr("cost_usd", 0.0081),
          attr("duration_ms", 900),
        );
      if (kind === "tool_result")
        attributes.push(attr("tool_name", "Bash"), attr("tool_use_id", `toolu-${step}`), attr("success", "true"), attr("duration_ms", "40"));
      if (kind === "api_error") attributes.push(attr("status_code", 529), attr("error", "Overloaded"), attr("attempt", 2), attr("request_id", `req-${step}`));
      if (kind === "assistant_response") attributes.push(attr("response", "Done: the parser test passes now."));
      records.push({ timeUnixNano: nanos(now), body: { stringValue: `claude_code.${kind}` }, attributes });
    }
    return {
      signal: "logs",
      body: Buffer.from(
        LogsRequest.encode(
          LogsRequest.fromObject({
            resourceLogs: [{ resource: RESOURCE, scopeLogs: [{ scope: { name: "com.anthropic.claude_code.events" }, logRecords: records }] }],
          }),
        ).finish(),
      ),
    };
  }
  const spans = [];
  for (let i = 0; i < PER_EXPORT; i++) {
    const step = n * PER_EXPORT + i;
    const turn = Math.floor(step / 4);
    const traceId = Buffer.from(hex(turn, 32), "hex");
    const root = i % 4 === 0;
    spans.push({
      traceId,
      spanId: Buffer.from(hex(step + 1, 16), "hex"),
      ...(!root && { parentSpanId: Buffer.from(hex(turn * 4 + 1, 16), "hex") }),
      name: root ? "claude_code.interaction" : i % 4 === 3 ? "claude_code.tool" : "claude_code.llm_request",
      kind: 1,
      startTimeUnixNano: nanos(now - 1000),
      endTimeUnixNano: nanos(now),
      attributes: [
        attr("session.id", `session-${Math.floor(turn / 20)}`),
        attr("request_id", `span-req-${step}`),
        attr("model", "claude-sonnet-4-5"),
        attr("input_tokens", 1200),
        attr("output_tokens", 300),
        attr("tool_use_id", `span-tool-${step}`),
        attr("tool_name", "Read"),
      ],
      status: {},
    });
  }
  return {
    signal: "traces",
    body: Buffer.from(
      TracesRequest.encode(
        TracesRequest.fromObject({ resourceSpans: [{ resource: RESOURCE, scopeSpans: [{ scope: { name: "com.anthropic.claude_code.tracing" }, spans }] }] }),
      ).finish(),
    ),
  };
}
