import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { geminiCli } from "../../lib/telemetry/dialects/geminiCli";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import { recognise } from "../../lib/telemetry/pipeline/recognise";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";
import type { Signal } from "../../lib/telemetry/records";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { TelemetrySessions } from "../../lib/views/telemetrySessionsView";
import { NO_REDACTION } from "../helpers/claudeCodeExports";
import { tempParent } from "../helpers/stateDir";
import { readRows } from "../helpers/telemetryRows";

// Gemini CLI 0.61.0's own exports (tests/fixtures/otlp/gemini-cli-0.61.0, captured from the real CLI
// run headless against tests/helpers/geminiMock.ts) fed to a real store as the receiver would, and
// the turns read back.
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/gemini-cli-0.61.0");
const SESSION = { plain: "04184064-800e-4b30-ab6f-9c7d8a58b8eb", session: "29c8fce6-08d6-4b76-8f8f-293855e8dfe0" };

interface Export {
  file: string;
  signal: Signal;
  body: Buffer;
}

/** A scenario's exports in the order the CLI sent them. */
function exportsOf(scenario: string): Export[] {
  const folder = path.join(FIXTURES, scenario);
  return fs
    .readdirSync(folder)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({ file, signal: /-(traces|logs|metrics)\./.exec(file)![1] as Signal, body: fs.readFileSync(path.join(folder, file)) }));
}

/** The exports with the log events `drop` says to leave out, as a client that did not send them. */
function without(exports: Export[], drop: (attributes: { key: string; value: { stringValue?: string } }[]) => boolean): Export[] {
  return exports.map((item) => {
    if (item.signal !== "logs") return item;
    const body = JSON.parse(item.body.toString("utf8")) as {
      resourceLogs: { scopeLogs: { logRecords: { attributes: { key: string; value: { stringValue?: string } }[] }[] }[] }[];
    };
    for (const resource of body.resourceLogs)
      for (const scope of resource.scopeLogs) scope.logRecords = scope.logRecords.filter((record) => !drop(record.attributes));
    return { ...item, body: Buffer.from(JSON.stringify(body)) };
  });
}
const attribute = (attributes: { key: string; value: { stringValue?: string } }[], key: string) => attributes.find((a) => a.key === key)?.value.stringValue;

function aStore() {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  // Received a little after the last record, as the receiver would have.
  const feed = (exports: Export[]) => {
    for (const item of exports)
      ingestExport(store, NO_REDACTION, item.signal, decodeExport(item.signal, "json", item.body), Date.parse("2026-11-28T18:13:00Z"));
  };
  const read = <T>(sql: string) => readRows<T>(file, sql);
  const turns = () => read<Record<string, unknown>>("SELECT * FROM lifecycles ORDER BY seq");
  const steps = () =>
    read<{ name: string; summary: string; start_at: number | null; parent_key: string | null }>(
      "SELECT name, summary, start_at, parent_key FROM steps ORDER BY at, step_key",
    );
  const parts = () =>
    read<{ kind: string; fields: string }>("SELECT kind, fields FROM parts ORDER BY at").map((part): Record<string, unknown> => ({
      kind: part.kind,
      ...(JSON.parse(part.fields) as Record<string, unknown>),
    }));
  return { file, store, feed, turns, steps, parts };
}

describe("Gemini CLI's turns, from its own exports", () => {
  it("a plain prompt: one turn, completed, with its prompt, answer, the main model and the router's call, tokens (cached too) and session", () => {
    const { store, feed, turns, steps, parts } = aStore();
    feed(exportsOf("plain"));
    expect(turns()).toEqual([
      expect.objectContaining({
        kind: "turn",
        service: "gemini-cli",
        state: "completed",
        prompt: "say hello, plainly",
        output: "Hello from the mock.",
        error: null,
        model: "gemini-3.8-flash",
        attempt: null,
        calls: 2,
        tools: 0,
        // The uncached tokens: Gemini counts the cached ones in its prompt's.
        input_tokens: 150,
        output_tokens: 40,
        cache_read_tokens: 20,
        // Gemini CLI sends no cost: estimated at list prices.
        cost_usd: 0.000229,
        estimated_calls: 2,
        session: SESSION.plain,
      }),
    ]);
    expect(parts()).toEqual([
      expect.objectContaining({ kind: "call", name: "router", model: "gemini-3.5-flash-lite", inputTokens: 50, outputTokens: 10, success: true }),
      expect.objectContaining({
        kind: "call",
        name: "main",
        model: "gemini-3.8-flash",
        inputTokens: 100,
        outputTokens: 30,
        cacheReadTokens: 20,
        success: true,
      }),
    ]);
    const named = steps().map((step) => `${step.name}: ${step.summary}`);
    expect(named[0]).toBe("user_prompt: a prompt of 18 characters");
    expect(named.at(-1)).toBe("run ended: the headless run ended");
    expect(named).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^api_response: router, gemini-3\.5-flash-lite, 50 in \/ 10 out, \d+ ms, finish: stop$/),
        expect.stringMatching(/^api_response: main, gemini-3\.8-flash, 100 in \/ 30 out \(20 cached\), \d+ ms/),
        expect.stringMatching(/^model call: gemini-3\.8-flash, \d+ ms$/),
      ]),
    );
    // Each log event of a call is drawn inside its span.
    const spanSteps = steps().filter((step) => step.name === "model call");
    expect(spanSteps.every((step) => step.start_at !== null)).toBe(true);
    expect(
      steps()
        .filter((step) => step.name === "api_request")
        .every((step) => step.parent_key?.startsWith("span:")),
    ).toBe(true);
    // Its configuration, the routing decision, the GenAI conventions' copies of each call and the metrics are no turn's: counted.
    expect(store.unmapped().map((row) => `${row.signal} ${row.name}`)).toEqual(
      expect.arrayContaining([
        "log gemini_cli.config",
        "log gemini_cli.model_routing",
        "log gen_ai.client.inference.operation.details",
        "metric gemini_cli.token.usage",
      ]),
    );
    store.close();
  });

  it("a prompt that runs tools: both model calls, the router's, and two tools, one failed with its error, in one turn", () => {
    const { store, feed, turns, steps, parts } = aStore();
    feed(exportsOf("tool"));
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "completed",
        prompt: "read note.txt and missing.txt, please",
        output: "Hello from the mock.",
        calls: 3,
        tools: 2,
        input_tokens: 250,
        output_tokens: 70,
      }),
    ]);
    const tools = parts().filter((part) => part.kind === "tool");
    expect(tools).toHaveLength(2);
    expect(tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "read_file", success: true }),
        expect.objectContaining({ name: "read_file", success: false, error: expect.stringMatching(/^File not found: .*missing\.txt$/) }),
      ]),
    );
    const named = steps().map((step) => `${step.name}: ${step.summary}`);
    expect(named).toEqual(
      expect.arrayContaining([
        "tools scheduled: done, 12 ms",
        expect.stringMatching(/^tool read_file: done/),
        expect.stringMatching(/^tool_call: read_file, accept, ok, \d+ ms$/),
        expect.stringMatching(/^tool_call: read_file, accept, failed: File not found: /),
      ]),
    );
    // The tool events are drawn inside the span that scheduled them.
    const scheduled = steps().find((step) => step.name === "tools scheduled")!;
    expect(scheduled.start_at).not.toBeNull();
    expect(
      steps()
        .filter((step) => step.name === "tool_call")
        .every((step) => step.parent_key !== null),
    ).toBe(true);
    store.close();
  });

  it("503 twice, then an answer: completed, the three attempts counted and each failure's status in a step", () => {
    const { store, feed, turns, steps, parts } = aStore();
    feed(exportsOf("retry"));
    // Two calls: the router's, and the main model's, tried three times (each 503 a try of the same request).
    expect(turns()).toEqual([expect.objectContaining({ state: "completed", attempt: 3, error: null, output: "Hello from the mock.", calls: 2 })]);
    expect(
      steps()
        .filter((step) => step.name === "api_error")
        .map((step) => step.summary),
    ).toEqual([
      expect.stringMatching(/^main, gemini-3\.8-flash, 503 UNAVAILABLE: The model is overloaded\. Please try again later\., \d+ ms$/),
      expect.stringMatching(/^main, gemini-3\.8-flash, 503 UNAVAILABLE: The model is overloaded\. Please try again later\., \d+ ms$/),
    ]);
    expect(parts().filter((part) => part.success === false)).toHaveLength(2);
    store.close();
  });

  it("503 until it gives up: failed at the run's end, with the API's error and the attempts made (one call of the main model, tried three times, and the router's)", () => {
    const { store, feed, turns } = aStore();
    feed(exportsOf("exhausted"));
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "failed",
        attempt: 3,
        error: "503 UNAVAILABLE: The model is overloaded. Please try again later.",
        output: null,
        calls: 2,
      }),
    ]);
    store.close();
  });

  it("killed while the API hung: processing, its last event the main call's request", () => {
    const { store, feed, turns } = aStore();
    feed(exportsOf("interrupted"));
    expect(turns()).toEqual([expect.objectContaining({ state: "processing", finished_at: null, last_step: "api_request: main, gemini-3.8-flash" })]);
    store.close();
  });

  it("without a headless run's end (an interactive session sends none), the main model's answer completes the turn, the router's does not", () => {
    const { store, feed, turns } = aStore();
    feed(without(exportsOf("tool"), (attributes) => attribute(attributes, "event.name") === "gemini_cli.plan.approval_mode_duration"));
    expect(turns()).toEqual([expect.objectContaining({ state: "completed", finished_at: expect.any(Number), calls: 3, tools: 2 })]);
    const { store: routed, feed: feedRouted, turns: routedTurns } = aStore();
    // Killed after the router answered, before the main model's call began.
    feedRouted(
      without(
        exportsOf("interrupted"),
        (attributes) => attribute(attributes, "event.name") === "gemini_cli.api_request" && attribute(attributes, "role") === "main",
      ),
    );
    expect(routedTurns()).toEqual([expect.objectContaining({ state: "processing", calls: 1 })]);
    store.close();
    routed.close();
  });

  it("two headless runs of one session (the second resumed): two turns of that session, though their prompt ids are the same, on the Sessions page as Gemini CLI's", () => {
    const { file, store, feed, turns } = aStore();
    feed(exportsOf("session"));
    expect(turns()).toEqual([
      expect.objectContaining({ state: "completed", prompt: "first prompt of the session", session: SESSION.session, calls: 2 }),
      expect.objectContaining({ state: "completed", prompt: "second prompt of the session", session: SESSION.session, calls: 2 }),
    ]);
    const sessions = new TelemetrySessions(file, 10 * 60_000);
    expect(sessions.list(Date.parse("2026-11-28T18:13:00Z"))).toEqual([
      expect.objectContaining({
        sessionId: SESSION.session,
        from: "Gemini CLI",
        service: "gemini-cli",
        turns: 2,
        calls: 4,
        inputTokens: 300,
        outputTokens: 80,
      }),
    ]);
    // Each call under its own model: the router's classifier is not the turn's model.
    expect(sessions.get(SESSION.session, Date.parse("2026-11-28T18:13:00Z"))!.byModel).toEqual([
      expect.objectContaining({ model: "gemini-3.8-flash", calls: 2, inputTokens: 200, outputTokens: 60 }),
      expect.objectContaining({ model: "gemini-3.5-flash-lite", calls: 2, inputTokens: 100, outputTokens: 20 }),
    ]);
    store.close();
  });

  it("the same, whatever order the exports arrive in, and however often", () => {
    for (const scenario of ["tool", "retry", "exhausted"]) {
      const { store: inOrder, feed: feedInOrder, turns: ordered } = aStore();
      feedInOrder(exportsOf(scenario));
      const { store, feed, turns } = aStore();
      const exports = exportsOf(scenario);
      feed([...exports].reverse());
      feed(exports);
      const pick = (rows: Record<string, unknown>[]) =>
        rows.map(({ state, prompt, output, error, attempt, calls, tools, input_tokens, model, started_at, finished_at }) => ({
          state,
          prompt,
          output,
          error,
          attempt,
          calls,
          tools,
          input_tokens,
          model,
          started_at,
          finished_at,
        }));
      expect(pick(turns()), scenario).toEqual(pick(ordered()));
      inOrder.close();
      store.close();
    }
  });

  it("its spans are its own, not the generic GenAI dialect's, though they carry gen_ai.operation.name", () => {
    const records = exportsOf("tool").flatMap((item) => decodeExport(item.signal, "json", item.body).records);
    const spans = records.filter((record) => record.signal === "span");
    expect(new Set(spans.map((span) => span.name))).toEqual(new Set(["llm_call", "tool_call", "schedule_tool_calls"]));
    expect(spans.every((span) => recognise(span) === geminiCli)).toBe(true);
  });
});
