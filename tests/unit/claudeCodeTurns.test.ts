import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { exportsOf, feed as feedStore, type Export } from "../helpers/claudeCodeExports";
import { tempParent } from "../helpers/stateDir";

// Claude Code 2.1.332's own exports (tests/fixtures/otlp, captured from the real CLI against a mock
// of the Messages API) fed to the store as the receiver would, and the turns read back.

function aStore() {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  const feed = (exports: Export[], now = Date.now()) => feedStore(store, exports, now);
  const turns = () => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT * FROM lifecycles ORDER BY seq").all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  };
  const steps = () => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT name, summary FROM steps ORDER BY at, name").all() as { name: string; summary: string }[];
    } finally {
      db.close();
    }
  };
  return { store, feed, turns, steps };
}

/** Claude Code's JSON log exports with `prompt.id` taken off (every event's, or `only` one event's), and their trace ids too unless `trace`. */
function withoutPromptId(exports: Export[], { only, trace = true }: { only?: string; trace?: boolean }): Export[] {
  type Attribute = { key: string; value: { stringValue?: string } };
  type Body = { resourceLogs: { scopeLogs: { logRecords: { attributes: Attribute[]; traceId?: string }[] }[] }[] };
  return exports.map((item) => {
    if (item.signal !== "logs" || item.encoding !== "json") return item;
    const body = JSON.parse(item.body.toString("utf8")) as Body;
    for (const record of body.resourceLogs.flatMap((resource) => resource.scopeLogs.flatMap((scope) => scope.logRecords))) {
      const name = record.attributes.find((attribute) => attribute.key === "event.name")?.value.stringValue;
      if (only && name !== only) continue;
      record.attributes = record.attributes.filter((attribute) => attribute.key !== "prompt.id");
      if (!trace) delete record.traceId;
    }
    return { ...item, body: Buffer.from(JSON.stringify(body)) };
  });
}

describe("Claude Code's turns, from its own exports", () => {
  it("a plain prompt: one turn, completed, with its prompt, answer, model, tokens, cost and session", () => {
    const { store, feed, turns, steps } = aStore();
    feed(exportsOf("plain"));
    expect(turns()).toEqual([
      expect.objectContaining({
        kind: "turn",
        service: "claude-code",
        state: "completed",
        prompt: "say hello",
        output: "Hello from the mock.",
        error: null,
        model: "claude-sonnet-4-5",
        calls: 1,
        tools: 0,
        input_tokens: 120,
        output_tokens: 30,
        cost_usd: 0.00081,
        session: "09c50f3d-627c-46e9-84ea-8248d62ab9c1",
      }),
    ]);
    const names = steps().map((step) => step.name);
    expect(names[0]).toBe("user_prompt");
    expect(names.at(-1)).toBe("turn ended");
    expect([...names].sort()).toEqual(["api_request", "assistant_response", "model call", "turn ended", "user_prompt"]);
    // Plugins loading and the metrics are no turn's: counted, not dropped.
    expect(store.unmapped().map((row) => `${row.signal} ${row.name} x${row.count}`)).toEqual(
      expect.arrayContaining(["log plugin_loaded x3", "metric claude_code.cost.usage x1"]),
    );
    expect(store.intake().map((row) => [row.signal, row.exports])).toEqual([
      ["logs", 1],
      ["metrics", 1],
      ["traces", 1],
    ]);
    store.close();
  });

  it("a prompt that runs a tool: two model calls and one tool in one turn, each call counted once though its span and its log record both tell of it", () => {
    for (const scenario of ["tool", "tool-protobuf"]) {
      const { store, feed, turns } = aStore();
      feed(exportsOf(scenario));
      const [turn] = turns();
      expect(turns(), scenario).toHaveLength(1);
      expect(turn, scenario).toMatchObject({
        state: "completed",
        prompt: "run echo hi",
        calls: 2,
        tools: 1,
        input_tokens: 240,
        output_tokens: 60,
        cost_usd: 0.00162,
      });
      store.close();
    }
  });

  it("529 errors then success: completed, each attempt a step inside its call, the retried ones failed", () => {
    const { store, feed, turns, steps } = aStore();
    feed(exportsOf("retry"));
    expect(turns()).toEqual([expect.objectContaining({ state: "completed", attempt: 3, calls: 1, error: null })]);
    expect(steps().filter((step) => step.name.startsWith("attempt"))).toEqual([
      { name: "attempt 1", summary: expect.stringMatching(/^failed, retried \(its status is not exported\), \d/) },
      { name: "attempt 2", summary: expect.stringMatching(/^failed, retried/) },
      { name: "attempt 3", summary: expect.stringMatching(/^answered, \d+ ms$/) },
    ]);
    store.close();
  });

  it("retries exhausted: the last of its attempts failed with the call's error", () => {
    const { store, feed, steps } = aStore();
    feed(exportsOf("exhausted"));
    const attempts = steps().filter((step) => step.name.startsWith("attempt"));
    expect(attempts).toHaveLength(11);
    expect(attempts.at(-1)!.summary).toMatch(/^failed: 529, Overloaded/);
    store.close();
  });

  it("retries exhausted: failed, with the error and the number of attempts", () => {
    const { store, feed, turns } = aStore();
    feed(exportsOf("exhausted"));
    expect(turns()).toEqual([expect.objectContaining({ state: "failed", attempt: 11, error: "529, Overloaded after 11 attempts", output: null })]);
    store.close();
  });

  it("a turn ended before any answer (the process stopped while the API hung): failed, and says so", () => {
    const { store, feed, turns } = aStore();
    feed(exportsOf("interrupted"));
    expect(turns()).toEqual([expect.objectContaining({ state: "failed", calls: 0, error: "the turn ended before any answer (interrupted?)" })]);
    store.close();
  });

  it("the same, whatever order the exports arrive in, and however often", () => {
    const { store: inOrder, feed: feedInOrder, turns: ordered } = aStore();
    feedInOrder(exportsOf("tool"));
    const { store, feed, turns } = aStore();
    const exports = exportsOf("tool");
    feed([...exports].reverse());
    feed(exports);
    const pick = (rows: Record<string, unknown>[]) =>
      rows.map(({ state, prompt, output, calls, tools, input_tokens, cost_usd, model, started_at, finished_at }) => ({
        state,
        prompt,
        output,
        calls,
        tools,
        input_tokens,
        cost_usd,
        model,
        started_at,
        finished_at,
      }));
    expect(pick(turns())).toEqual(pick(ordered()));
    inOrder.close();
    store.close();
  });

  it("from the log events alone (no traces exported), or the spans alone, the turn is still whole", () => {
    const { store: logsOnly, feed: feedLogs, turns: fromLogs } = aStore();
    feedLogs(exportsOf("tool").filter((item) => item.signal === "logs"));
    expect(fromLogs()).toEqual([
      expect.objectContaining({ state: "completed", prompt: "run echo hi", output: "Hello from the mock.", calls: 2, tools: 1, cost_usd: 0.00162 }),
    ]);
    const { store: spansOnly, feed: feedSpans, turns: fromSpans } = aStore();
    feedSpans(exportsOf("tool").filter((item) => item.signal === "traces"));
    // Spans carry no cost: it is estimated at list prices, and comes to what Claude Code said; the prompt's text is on the interaction span.
    expect(fromSpans()).toEqual([
      expect.objectContaining({
        state: "completed",
        prompt: "run echo hi",
        calls: 2,
        tools: 1,
        input_tokens: 240,
        cost_usd: 0.00162,
        estimated_calls: 2,
        unpriced_calls: 0,
      }),
    ]);
    logsOnly.close();
    spansOnly.close();
  });

  it("a prompt Claude Code sent without its prompt.id is still a turn: whole when its events share its trace, its prompt alone when nothing ties them", () => {
    const { store, feed, turns } = aStore();
    // The prompt alone lost its id; the events after it name the same trace.
    feed(withoutPromptId(exportsOf("plain"), { only: "user_prompt" }));
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "completed",
        prompt: "say hello",
        output: "Hello from the mock.",
        calls: 1,
        session: "09c50f3d-627c-46e9-84ea-8248d62ab9c1",
      }),
    ]);
    store.close();

    const { store: bare, feed: feedBare, turns: bareTurns } = aStore();
    // No id and no trace on any event: the prompt is its own turn; the rest are counted as unmapped, never dropped.
    feedBare(
      withoutPromptId(
        exportsOf("plain").filter((item) => item.signal === "logs"),
        { trace: false },
      ),
    );
    // Its page says why nothing follows it (and why it may come to read as stuck).
    expect(bareTurns()).toEqual([
      expect.objectContaining({
        state: "processing",
        prompt: "say hello",
        session: "09c50f3d-627c-46e9-84ea-8248d62ab9c1",
        last_step: expect.stringMatching(
          /^user_prompt: a prompt of 9 characters; sent without its prompt\.id or a trace, so the events after it cannot be told apart from other prompts' and are counted on Health as unmapped$/,
        ),
      }),
    ]);
    expect(bare.unmapped().map((row) => `${row.signal} ${row.name}`)).toEqual(expect.arrayContaining(["log api_request", "log assistant_response"]));
    bare.close();
  });

  it("a prompt with no answer yet is processing, its last event named", () => {
    const { store, feed, turns } = aStore();
    feed(exportsOf("interrupted").filter((item) => item.signal === "logs"));
    expect(turns()).toEqual([expect.objectContaining({ state: "processing", last_step: expect.stringMatching(/^user_prompt: a prompt of 9 characters/) })]);
    store.close();
  });

  it("tokens and cost per day and model, and per session, each call counted once though its span and its log event both report it", () => {
    const { store, feed, turns } = aStore();
    feed(exportsOf("plain"));
    feed(exportsOf("tool-protobuf"));
    // The same exports again (an exporter's retry) change nothing.
    feed(exportsOf("tool-protobuf"));
    const usage = store.usage();
    const day = new Date(turns()[0]!.started_at as number).toISOString().slice(0, 10);
    expect(usage.byDayAndModel).toEqual([
      {
        day,
        model: "claude-sonnet-4-5",
        calls: 3,
        inputTokens: 360,
        outputTokens: 90,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: expect.closeTo(0.00243, 8),
        estimatedCalls: 0,
        unpricedCalls: 0,
      },
    ]);
    // The same figures the turns carry.
    expect(turns().reduce((sum, turn) => sum + (turn.cost_usd as number), 0)).toBeCloseTo(0.00243, 8);
    expect(usage.bySession).toEqual([
      expect.objectContaining({
        service: "claude-code",
        turns: 1,
        tools: 1,
        calls: 2,
        inputTokens: 240,
        outputTokens: 60,
        costUsd: expect.closeTo(0.00162, 8),
      }),
      expect.objectContaining({
        session: "09c50f3d-627c-46e9-84ea-8248d62ab9c1",
        service: "claude-code",
        turns: 1,
        tools: 0,
        calls: 1,
        inputTokens: 120,
        outputTokens: 30,
        costUsd: expect.closeTo(0.00081, 8),
      }),
    ]);
  });
});
