import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import protobuf from "protobufjs/light";
import { describe, expect, it } from "vitest";
import { decodeExport, encodeResponse, LIMITS, nanosToMs } from "../../lib/telemetry/otlp/decode";
import type { LogRecord, SpanRecord } from "../../lib/telemetry/records";
import descriptor from "../../lib/telemetry/otlp/descriptor.json";
import { otlpDescriptor } from "../../scripts/otlp-descriptor.mjs";

// Exports captured from Claude Code 2.1.332 run headless against a mock of the Messages API
// (tests/fixtures/otlp): the same scenario, a prompt that runs one Bash tool, once over OTLP/HTTP
// protobuf with gzip and once in JSON.
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/claude-code-2.1.332");
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name));

describe("decoding OTLP exports", () => {
  it("reads Claude Code's protobuf and JSON exports of the same turn into the same records", () => {
    const protobufSpans = decodeExport("traces", "protobuf", zlib.gunzipSync(fixture("tool-protobuf/0001-traces.pb.gz"))).records as SpanRecord[];
    const jsonSpans = decodeExport("traces", "json", fixture("tool/0001-traces.json")).records as SpanRecord[];
    const shape = (spans: SpanRecord[]) =>
      spans.map((span) => [
        span.name,
        span.kind,
        span.status.code,
        span.parentSpanId !== null,
        span.attributes["span.type"],
        span.attributes["gen_ai.tool.name"] ?? null,
        span.events.map((event) => event.name),
      ]);
    expect(shape(protobufSpans)).toEqual(shape(jsonSpans));
    expect(shape(jsonSpans)).toContainEqual(["claude_code.interaction", "internal", "unset", false, "interaction", null, []]);
    const interaction = jsonSpans.find((span) => span.name === "claude_code.interaction")!;
    expect(interaction.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(interaction.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(interaction.origin.resource["service.name"]).toBe("claude-code");
    expect(interaction.origin.scope.name).toBe("com.anthropic.claude_code.tracing");
    expect(interaction.endMs).toBeGreaterThan(interaction.startMs);
    // Every child names its parent, in both encodings.
    for (const spans of [protobufSpans, jsonSpans]) {
      const ids = new Set(spans.map((span) => span.spanId));
      for (const span of spans.filter((s) => s.parentSpanId)) expect(ids.has(span.parentSpanId!), span.name).toBe(true);
    }

    const events = (logs: LogRecord[]) => logs.map((log) => log.eventName).filter((name) => name !== "claude_code.plugin_loaded" && name !== "plugin_loaded");
    const protobufLogs = decodeExport("logs", "protobuf", zlib.gunzipSync(fixture("tool-protobuf/0002-logs.pb.gz"))).records as LogRecord[];
    const jsonLogs = decodeExport("logs", "json", fixture("tool/0002-logs.json")).records as LogRecord[];
    expect(events(protobufLogs)).toEqual(events(jsonLogs));
    const prompt = jsonLogs.find((log) => log.eventName === "user_prompt")!;
    expect(prompt.attributes).toMatchObject({ "prompt.id": expect.any(String), "session.id": expect.any(String), "event.sequence": 4, prompt: "run echo hi" });
    expect(prompt.traceId).toBe(interaction.traceId);
    const toolResult = protobufLogs.find((log) => log.eventName === "tool_result")!;
    expect(toolResult.attributes).toMatchObject({ tool_name: "Bash", success: "true" });

    const points = decodeExport("metrics", "json", fixture("tool/0003-metrics.json")).records;
    expect(new Set(points.map((point) => (point.signal === "metric" ? point.name : "")))).toEqual(
      new Set(["claude_code.session.count", "claude_code.cost.usage", "claude_code.token.usage", "claude_code.active_time.total"]),
    );
  });

  it("refuses what is not an export, and rejects records without ids or times, counting them", () => {
    expect(() => decodeExport("traces", "protobuf", Buffer.from([0x0a, 0xff, 0xff, 0xff]))).toThrow(/Not an OTLP ExportTraceServiceRequest in protobuf/);
    expect(() => decodeExport("logs", "json", Buffer.from("{nope"))).toThrow(/Not an OTLP ExportLogsServiceRequest in JSON/);
    expect(() => decodeExport("logs", "json", Buffer.from("[1,2]"))).toThrow(/not a JSON object/);
    // Wrong types inside are tolerated record by record.
    const decoded = decodeExport(
      "traces",
      "json",
      Buffer.from(
        JSON.stringify({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    { traceId: "xyz", spanId: "abc", name: "bad", startTimeUnixNano: "1" },
                    {
                      traceId: "0af7651916cd43dd8448eb211c80319c",
                      spanId: "b7ad6b7169203331",
                      name: "good",
                      startTimeUnixNano: "1764000000000000000",
                      attributes: "not a list",
                    },
                    "a string",
                  ],
                },
              ],
            },
            7,
          ],
        }),
      ),
    );
    expect(decoded).toMatchObject({ rejected: 1, reason: "a span without a valid trace or span id" });
    expect(decoded.records).toEqual([expect.objectContaining({ name: "good", attributes: {}, startMs: 1764000000000 })]);
  });

  it("bounds what a record may hold: long values cut, attributes and nesting limited", () => {
    const long = "x".repeat(LIMITS.valueChars + 10);
    const many = Array.from({ length: LIMITS.attributes + 50 }, (_, i) => ({ key: `k${i}`, value: { intValue: String(i) } }));
    let deep: unknown = { stringValue: "bottom" };
    for (let i = 0; i < 10; i++) deep = { arrayValue: { values: [deep] } };
    const body = {
      resourceLogs: [
        {
          scopeLogs: [
            { logRecords: [{ timeUnixNano: "1764000000000000000", body: { stringValue: long }, attributes: [...many, { key: "deep", value: deep }] }] },
          ],
        },
      ],
    };
    const [log] = decodeExport("logs", "json", Buffer.from(JSON.stringify(body))).records as LogRecord[];
    expect((log!.body as string).length).toBe(LIMITS.valueChars + 1);
    expect(Object.keys(log!.attributes)).toHaveLength(LIMITS.attributes);
    expect(log!.attributes.k0).toBe(0);
  });

  it("answers in the request's encoding, with what was rejected", () => {
    expect(JSON.parse(encodeResponse("traces", "json", 0, null).toString())).toEqual({});
    expect(JSON.parse(encodeResponse("logs", "json", 2, "a log record without a time").toString())).toEqual({
      partialSuccess: { rejectedLogRecords: "2", errorMessage: "a log record without a time" },
    });
    expect(encodeResponse("traces", "protobuf", 0, null)).toHaveLength(0);
    expect(encodeResponse("metrics", "protobuf", 3, "why").length).toBeGreaterThan(0);
  });

  it("reads times as epoch nanoseconds, and none for zero or garbage", () => {
    expect(nanosToMs("1795713269035000000")).toBe(1795713269035);
    expect(nanosToMs("1795713269035123456")).toBe(1795713269035.123);
    expect(nanosToMs(1.5e18)).toBe(1.5e12);
    expect(nanosToMs("0")).toBeNull();
    expect(nanosToMs("-5")).toBeNull();
    expect(nanosToMs("12abc")).toBeNull();
  });

  it("reads from protobuf only what the export holds, and every value type as JSON gives it", () => {
    // protobufjs keeps each field's default on the message's prototype: an int is not also an empty string.
    const attributes = [
      { key: "int", value: { intValue: "-9007199254740993" } },
      { key: "zero", value: { intValue: 0 } },
      { key: "double", value: { doubleValue: 1.5 } },
      { key: "bytes", value: { bytesValue: Buffer.from("hi") } },
      { key: "nested", value: { kvlistValue: { values: [{ key: "on", value: { boolValue: true } }] } } },
      { key: "list", value: { arrayValue: { values: [{ stringValue: "a" }, { intValue: 3 }, {}] } } },
      { key: "unset", value: {} },
    ];
    const type = protobuf.Root.fromJSON(descriptor as protobuf.INamespace).lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest");
    const logs = {
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                { timeUnixNano: "1795713269035123456", traceId: Buffer.alloc(16, 0xab), spanId: Buffer.alloc(7, 1), attributes },
                { observedTimeUnixNano: "18446744073709551615" },
                {},
              ],
            },
          ],
        },
      ],
    };
    const decoded = decodeExport("logs", "protobuf", Buffer.from(type.encode(type.fromObject(logs)).finish()));
    const [log, observed] = decoded.records as LogRecord[];
    expect(log).toMatchObject({ atMs: 1795713269035.123, traceId: "ab".repeat(16), spanId: null, body: null, severityText: "", eventName: null });
    expect(log!.attributes).toEqual({ int: -9007199254740992, zero: 0, double: 1.5, bytes: "aGk=", nested: { on: true }, list: ["a", 3, null], unset: null });
    expect(observed!.atMs).toBe(18446744073709.55);
    expect(decoded).toMatchObject({ rejected: 1, reason: "a log record without a time" });
  });

  it("refuses a protobuf export whose strings are not UTF-8, as proto3 says", () => {
    const type = protobuf.Root.fromJSON(descriptor as protobuf.INamespace).lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest");
    const body = Buffer.from(
      type
        .encode(
          type.fromObject({
            resourceLogs: [
              { scopeLogs: [{ logRecords: [{ timeUnixNano: "1795713269035123456", body: { stringValue: "ZZZZ \uFFFD is a character of its own" } }] }] },
            ],
          }),
        )
        .finish(),
    );
    expect((decodeExport("logs", "protobuf", body).records as LogRecord[])[0]!.body).toBe("ZZZZ \uFFFD is a character of its own");
    body.fill(0xff, body.indexOf("ZZZZ"), body.indexOf("ZZZZ") + 4);
    expect(() => decodeExport("logs", "protobuf", body)).toThrow(/Not an OTLP ExportLogsServiceRequest in protobuf: invalid UTF-8/);
  });

  it("decodes with the definitions compiled from the vendored .proto files, as they are now", () => {
    expect(fs.readFileSync(path.resolve(__dirname, "../../lib/telemetry/otlp/descriptor.json"), "utf8")).toBe(otlpDescriptor());
  });
});
