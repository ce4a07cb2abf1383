import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { Signal } from "../../lib/telemetry/records";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { feed, type Export } from "../helpers/claudeCodeExports";
import { tempParent } from "../helpers/stateDir";

// Spans of the GenAI conventions (current and previous names) and OpenInference's, fed to a real
// store as the receiver would: an agent's run with its calls and tools is one lifecycle whatever
// order its spans arrive in, and every way a call can fail says failed with the error's text.

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const at = Date.now() - 60_000;

interface SpanSpec {
  id: string;
  parent?: string;
  name?: string;
  attributes: Record<string, string | number | string[]>;
  start?: number;
  end?: number;
  status?: { code: number; message?: string };
  events?: { name: string; attributes: Record<string, string> }[];
}

const value = (v: string | number | string[]): object =>
  Array.isArray(v) ? { arrayValue: { values: v.map((item) => ({ stringValue: item })) } } : typeof v === "number" ? { intValue: v } : { stringValue: v };
const attributes = (record: Record<string, string | number | string[]>) => Object.entries(record).map(([key, v]) => ({ key, value: value(v) }));

/** One export of spans (OTLP/JSON) from `scope`. */
function anExport(spans: SpanSpec[], scope = "an-agent-framework"): Export {
  const body = {
    resourceSpans: [
      {
        resource: { attributes: attributes({ "service.name": "agents" }) },
        scopeSpans: [
          {
            scope: { name: scope },
            spans: spans.map((span) => ({
              traceId: TRACE,
              spanId: span.id.padStart(16, "0"),
              ...(span.parent && { parentSpanId: span.parent.padStart(16, "0") }),
              name: span.name ?? String(span.attributes["gen_ai.operation.name"] ?? "span"),
              kind: 1,
              startTimeUnixNano: `${at + (span.start ?? 0)}000000`,
              endTimeUnixNano: `${at + (span.end ?? 100)}000000`,
              attributes: attributes(span.attributes),
              status: span.status ?? {},
              events: (span.events ?? []).map((event) => ({ name: event.name, timeUnixNano: `${at + 50}000000`, attributes: attributes(event.attributes) })),
            })),
          },
        ],
      },
    ],
  };
  return { signal: "traces", body: Buffer.from(JSON.stringify(body)), encoding: "json" };
}

/** The keys of lifecycles still waiting for their parent after `exports`. */
function waitingAfter(exports: Export[]) {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  feed(store, exports);
  store.close();
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT key FROM lifecycle_keys WHERE key >= 'awaits:' AND key < 'awaits;' ORDER BY key").pluck().all() as string[];
  } finally {
    db.close();
  }
}

function lifecyclesAfter(exports: Export[]) {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  feed(store, exports);
  store.close();
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT * FROM lifecycles ORDER BY seq").all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

const chat = (id: string, parent: string | undefined, extra: Record<string, string | number | string[]> = {}): SpanSpec => ({
  id,
  parent,
  start: 10,
  end: 60,
  attributes: {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "anthropic",
    "gen_ai.request.model": "claude-haiku-4-5",
    "gen_ai.usage.input_tokens": 50,
    "gen_ai.usage.output_tokens": 5,
    "gen_ai.response.finish_reasons": ["stop"],
    ...extra,
  },
});
const agent = (id: string, extra: Partial<SpanSpec> = {}): SpanSpec => ({
  id,
  start: 0,
  end: 100,
  attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support" },
  ...extra,
});
const tool = (id: string, parent: string): SpanSpec => ({
  id,
  parent,
  start: 60,
  end: 70,
  attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": `call_${id}` },
});

describe("the GenAI conventions", () => {
  it("an agent's run, its calls and tools exported before it: one agent lifecycle", () => {
    const rows = lifecyclesAfter([anExport([chat("a1", "aa"), tool("f1", "aa")]), anExport([chat("a2", "aa")]), anExport([agent("aa")])]);
    expect(rows).toEqual([
      expect.objectContaining({ kind: "agent", state: "completed", calls: 2, tools: 1, input_tokens: 100, output_tokens: 10, model: "claude-haiku-4-5" }),
    ]);
  });

  it("a child waits for its parent under a key of its own, taken away once the parent arrives", () => {
    expect(waitingAfter([anExport([chat("a1", "aa"), chat("a2", "ee")])])).toEqual([
      "awaits:span:00000000000000aa:span:00000000000000a1",
      "awaits:span:00000000000000ee:span:00000000000000a2",
    ]);
    expect(waitingAfter([anExport([chat("a1", "aa"), chat("a2", "ee")]), anExport([agent("aa")])])).toEqual([
      "awaits:span:00000000000000ee:span:00000000000000a2",
    ]);
  });

  it("a call arriving after its run joins it", () => {
    const rows = lifecyclesAfter([anExport([agent("aa")]), anExport([chat("a1", "aa")])]);
    expect(rows).toEqual([expect.objectContaining({ kind: "agent", calls: 1 })]);
  });

  it("two calls under a span that never arrives (a plain HTTP span) stay two calls", () => {
    const rows = lifecyclesAfter([anExport([chat("a1", "ee"), chat("a2", "ee")])]);
    expect(rows).toEqual([expect.objectContaining({ kind: "call", calls: 1 }), expect.objectContaining({ kind: "call", calls: 1 })]);
  });

  it("the previous conventions' names: gen_ai.system and prompt/completion tokens", () => {
    const rows = lifecyclesAfter([
      anExport([
        {
          id: "c1",
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.prompt_tokens": 70,
            "gen_ai.usage.completion_tokens": 7,
            "gen_ai.response.finish_reasons": ["stop"],
          },
        },
      ]),
    ]);
    expect(rows).toEqual([expect.objectContaining({ kind: "call", state: "completed", input_tokens: 70, output_tokens: 7, model: "gpt-4o" })]);
  });

  it("a finish reason of error fails the call", () => {
    const rows = lifecyclesAfter([anExport([chat("c1", undefined, { "gen_ai.response.finish_reasons": ["error"], "gen_ai.usage.output_tokens": 0 })])]);
    expect(rows).toEqual([expect.objectContaining({ state: "failed", error: "finished with error" })]);
  });

  it("an exception event alone fails the call with its text", () => {
    const rows = lifecyclesAfter([
      anExport([
        {
          ...chat("c1", undefined),
          events: [{ name: "exception", attributes: { "exception.type": "APIConnectionError", "exception.message": "Connection refused" } }],
        },
      ]),
    ]);
    expect(rows).toEqual([expect.objectContaining({ state: "failed", error: "APIConnectionError: Connection refused" })]);
  });

  it("an error on the agent (its call finished with error): the run failed with the agent's error", () => {
    const rows = lifecyclesAfter([
      anExport([chat("c1", "aa", { "gen_ai.response.finish_reasons": ["error"] }), agent("aa", { status: { code: 2, message: "Model returned an error" } })]),
    ]);
    expect(rows).toEqual([expect.objectContaining({ kind: "agent", state: "failed", error: "Model returned an error" })]);
  });

  it("a run that says it ended well after its last call failed: failed", () => {
    const rows = lifecyclesAfter([anExport([chat("c1", "aa", { "gen_ai.response.finish_reasons": ["error"] }), agent("aa")])]);
    expect(rows).toEqual([expect.objectContaining({ kind: "agent", state: "failed", error: "finished with error" })]);
  });

  it("a call that ends with no finish reason nor usage was cut off: not completed", () => {
    const rows = lifecyclesAfter([anExport([{ id: "c1", attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-haiku-4-5" } }])]);
    expect(rows).toEqual([expect.objectContaining({ state: "failed", error: expect.stringContaining("aborted") })]);
  });
});

const OPEN_INFERENCE = path.resolve(__dirname, "../fixtures/otlp/openinference-anthropic-0.2.8");
const fixture = (scenario: string): Export[] =>
  fs
    .readdirSync(path.join(OPEN_INFERENCE, scenario))
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({ signal: /-(traces)\./.exec(file)![1] as Signal, body: fs.readFileSync(path.join(OPEN_INFERENCE, scenario, file)), encoding: "json" }));

describe("OpenInference's Anthropic instrumentation (captured)", () => {
  it("a call: one call, told by OpenInference's span and the SDK's own inside it, counted once", () => {
    expect(lifecyclesAfter(fixture("plain"))).toEqual([
      expect.objectContaining({ kind: "call", state: "completed", calls: 1, input_tokens: 120, output_tokens: 30, model: "claude-sonnet-4-5" }),
    ]);
  });

  it("an agent whose model asked for a tool: one agent, two calls, one tool", () => {
    expect(lifecyclesAfter(fixture("tool"))).toEqual([
      expect.objectContaining({
        kind: "agent",
        state: "completed",
        calls: 2,
        tools: 1,
        input_tokens: 240,
        output_tokens: 60,
        prompt: "say hi with bash",
        output: "Hello from the mock.",
      }),
    ]);
  });

  it("529 every time: one call, failed with the error, its two attempts", () => {
    expect(lifecyclesAfter(fixture("error"))).toEqual([
      expect.objectContaining({ kind: "call", state: "failed", calls: 1, attempt: 2, error: expect.stringMatching(/529/) }),
    ]);
  });

  it("a call its caller aborted: the SDK's APIUserAbortError on OpenInference's span says so plainly, over the SDK's own span that only stopped", () => {
    expect(lifecyclesAfter(fixture("aborted"))).toEqual([
      expect.objectContaining({ kind: "call", state: "failed", calls: 1, error: "aborted by the caller: Request was aborted." }),
    ]);
  });

  it("the same abort whichever of its two spans ended first: the SDK's own span that only stopped never hides the abort OpenInference's span around it says", () => {
    // On a busy machine the SDK's span can end a moment after OpenInference's around it.
    const [told] = fixture("aborted");
    const body = JSON.parse(told!.body.toString()) as { resourceSpans: { scopeSpans: { scope: { name: string }; spans: { endTimeUnixNano: string }[] }[] }[] };
    const spanOf = (scope: string) => body.resourceSpans.flatMap((resource) => resource.scopeSpans).find((scoped) => scoped.scope.name === scope)!.spans[0]!;
    const outer = spanOf("@arizeai/openinference-instrumentation-anthropic");
    spanOf("com.anthropic.sdk.typescript").endTimeUnixNano = String(BigInt(outer.endTimeUnixNano) + 2_000_000n);
    expect(lifecyclesAfter([{ ...told!, body: Buffer.from(JSON.stringify(body)) }])).toEqual([
      expect.objectContaining({ state: "failed", calls: 1, error: "aborted by the caller: Request was aborted." }),
    ]);
  });
});

describe("usage", () => {
  it("a call told by OpenInference's span and the SDK's inside it counts once in the usage", () => {
    const file = path.join(tempParent(), "telemetry.db");
    const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
    feed(store, fixture("tool"));
    expect(store.usage().byDayAndModel).toEqual([expect.objectContaining({ model: "claude-sonnet-4-5", calls: 2, inputTokens: 240, outputTokens: 60 })]);
    store.close();
  });
});

const TRACELOOP = path.resolve(__dirname, "../fixtures/otlp/traceloop-0.27.0");
const traceloopFixture = (scenario: string): Export[] =>
  fs
    .readdirSync(path.join(TRACELOOP, scenario))
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({ signal: "traces", body: fs.readFileSync(path.join(TRACELOOP, scenario, file)), encoding: "json" }));

describe("Traceloop's OpenLLMetry (captured)", () => {
  it("a call: one call, completed, with its model and tokens", () => {
    expect(lifecyclesAfter(traceloopFixture("plain"))).toEqual([
      expect.objectContaining({ kind: "call", state: "completed", calls: 1, input_tokens: 120, output_tokens: 30, model: "claude-sonnet-4-5" }),
    ]);
  });

  it("withAgent, its calls and withTool: one agent, two calls, one tool", () => {
    expect(lifecyclesAfter(traceloopFixture("tool"))).toEqual([
      expect.objectContaining({ kind: "agent", state: "completed", calls: 2, tools: 1, input_tokens: 240, output_tokens: 60 }),
    ]);
  });

  it("529 every time: one call, failed with the error", () => {
    expect(lifecyclesAfter(traceloopFixture("error"))).toEqual([
      expect.objectContaining({ kind: "call", state: "failed", calls: 1, error: expect.stringMatching(/^Error: 529/) }),
    ]);
  });
});

const MASTRA = path.resolve(__dirname, "../fixtures/otlp/mastra-1.71.0");
const mastraFixture = (scenario: string): Export[] =>
  fs
    .readdirSync(path.join(MASTRA, scenario))
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({ signal: "traces", body: fs.readFileSync(path.join(MASTRA, scenario, file)), encoding: "json" }));

describe("Mastra (captured)", () => {
  it("an agent's generate: one agent, its call, completed", () => {
    expect(lifecyclesAfter(mastraFixture("plain"))).toEqual([
      expect.objectContaining({ kind: "agent", state: "completed", calls: 1, tools: 0, input_tokens: 120, output_tokens: 30, model: "claude-sonnet-4-5" }),
    ]);
  });

  it("a tool loop of two steps: one agent, two calls, one tool", () => {
    expect(lifecyclesAfter(mastraFixture("tool"))).toEqual([
      expect.objectContaining({ kind: "agent", state: "completed", calls: 2, tools: 1, input_tokens: 240, output_tokens: 60 }),
    ]);
  });

  it("529 every time: the error on invoke_agent, its chat finished with error: the agent failed with it", () => {
    expect(lifecyclesAfter(mastraFixture("error"))).toEqual([
      expect.objectContaining({ kind: "agent", state: "failed", calls: 1, error: "Error: Overloaded" }),
    ]);
  });
  it("its model_chunk spans (one per streamed chunk) are known, not shown: counted apart from what no dialect understands", () => {
    const store = new TelemetryStore(path.join(tempParent(), "telemetry.db"), { keepMs: 24 * 3600_000, maxBytes: 200e6 });
    feed(store, mastraFixture("plain"));
    expect(store.unmapped().map((row) => row.name)).not.toContain("model_chunk shell-agent");
    expect(store.unshown()).toEqual([{ dialect: "genai", names: 1, count: expect.any(Number), lastAt: expect.any(Number) }]);
    store.close();
  });
});
