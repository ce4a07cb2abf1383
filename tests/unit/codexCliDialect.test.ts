import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";
import { recognise } from "../../lib/telemetry/pipeline/recognise";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { NO_REDACTION } from "../helpers/claudeCodeExports";
import { recordedExports } from "../helpers/recordedExports";
import { tempParent } from "../helpers/stateDir";
import { readRows } from "../helpers/telemetryRows";

// Codex CLI 0.171.0's own exports (tests/fixtures/otlp/codex-0.171.0, captured from the real
// `codex exec` against a mock of the Responses API) fed to a real store as the receiver would, and
// the turns read back.
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/codex-0.171.0");

function aStore() {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  const feed = (...scenarios: string[]) => {
    for (const scenario of scenarios) {
      for (const item of recordedExports(path.join(FIXTURES, scenario)))
        ingestExport(store, NO_REDACTION, item.signal, decodeExport(item.signal, "json", item.body));
    }
  };
  const read = <T>(sql: string) => readRows<T>(file, sql);
  const turns = () => read<Record<string, unknown>>("SELECT * FROM lifecycles ORDER BY seq");
  const steps = () =>
    read<{ name: string; summary: string; parent_key: string | null; start_at: number | null }>(
      "SELECT name, summary, parent_key, start_at FROM steps ORDER BY at, step_key",
    );
  const parts = () =>
    read<{ kind: string; id: string; fields: string }>("SELECT kind, id, fields FROM parts ORDER BY kind, id").map((part) => ({
      ...part,
      fields: JSON.parse(part.fields) as Record<string, unknown>,
    }));
  return { store, feed, turns, steps, parts };
}

describe("Codex CLI's turns, from its own exports", () => {
  it("recognises its log events by their scope and its spans by their codex crate, as no other dialect's", () => {
    const [logs] = recordedExports(path.join(FIXTURES, "plain")).filter((item) => item.signal === "logs");
    const records = decodeExport("logs", "json", logs!.body).records;
    expect(new Set(records.map((record) => recognise(record)?.name))).toEqual(new Set(["codex-cli"]));
    const [traces] = recordedExports(path.join(FIXTURES, "plain")).filter((item) => item.signal === "traces");
    expect(new Set(decodeExport("traces", "json", traces!.body).records.map((record) => recognise(record)?.name))).toEqual(new Set(["codex-cli"]));
  });

  it("a plain prompt: one turn in its conversation, completed, with its prompt, model, one model call and its tokens (cached kept apart)", () => {
    const { store, feed, turns, steps, parts } = aStore();
    feed("plain");
    expect(turns()).toEqual([
      expect.objectContaining({
        kind: "turn",
        service: "codex_exec",
        state: "completed",
        prompt: "say hello, plainly",
        error: null,
        model: "gpt-5-codex",
        calls: 1,
        tools: 0,
        attempt: 1,
        input_tokens: 100,
        output_tokens: 30,
        cache_read_tokens: 20,
        session: "01a22359-2eff-7971-afdc-11d14a070b95",
      }),
    ]);
    // Codex sends no cost and its answer's span no model: the call is of its turn's model, priced at list prices (gpt-5's: 100 × $1.25 + 20 cached × $0.125 + 30 × $10 per million).
    expect(turns()[0]).toMatchObject({ cost_usd: 0.000428, estimated_calls: 1, unpriced_calls: 0 });
    expect(parts()).toEqual([
      expect.objectContaining({
        kind: "call",
        fields: {
          model: "gpt-5-codex",
          inputTokens: 100,
          outputTokens: 30,
          cacheReadTokens: 20,
          cacheWriteTokens: 0,
          reasoningTokens: 5,
          success: true,
          modelOfLifecycle: true,
          toldBy: "telemetry",
          estimatedCostUsd: 0.0004275,
        },
      }),
    ]);
    const made = steps();
    expect(made.map((step) => step.name)).toEqual(["user_prompt", "api_request", "model call", "turn ended"]);
    expect(made[1]!.summary).toBe("attempt 1, 200, 8 ms, /responses");
    expect(made[2]!.summary).toBe("100 in / 30 out, 20 cached, 5 reasoning");
    // Each step says when it began and the span it happened in, for a timeline.
    expect(made.every((step) => step.parent_key?.startsWith("span:"))).toBe(true);
    expect(made.find((step) => step.name === "turn ended")!.start_at).not.toBeNull();
    // The conversation starting is the thread's, no turn's; the spans that only time inner work are counted as known, not shown, apart from what no dialect understands.
    // What is left unmapped is a record of its SDK's with no event name, only a source line: not understood.
    expect(store.unmapped().map((row) => `${row.signal} ${row.name}`)).toEqual(["log event otel/src/metrics/client.rs:330"]);
    expect(store.unshown()).toEqual([{ dialect: "codex-cli", names: 12, count: 24, lastAt: expect.any(Number) }]);
    store.close();
  });

  it("a prompt that runs a tool: two model calls and the tool (its decision, command and result) in one turn", () => {
    const { store, feed, turns, steps, parts } = aStore();
    feed("tool");
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "completed",
        prompt: "run echo hi, please",
        calls: 2,
        tools: 1,
        input_tokens: 200,
        output_tokens: 60,
        cache_read_tokens: 40,
      }),
    ]);
    expect(parts().find((part) => part.kind === "tool")).toMatchObject({ id: "call_mock_1", fields: { name: "exec_command", success: true } });
    const summaries = steps().map((step) => `${step.name}: ${step.summary}`);
    expect(summaries).toContainEqual("tool_decision: exec_command, approved, by Config");
    expect(summaries).toContainEqual(expect.stringMatching(/^tool_result: exec_command, ok, \d+ ms, args \{"cmd":"echo hi"\}$/));
    expect(summaries).toContainEqual(expect.stringMatching(/^tool exec_command: done, \d+ ms, from direct$/));
    store.close();
  });

  it("500, 500, then an answer: one call, completed, three attempts, the two failed ones shown as steps", () => {
    const { store, feed, turns, steps } = aStore();
    feed("retry");
    expect(turns()).toEqual([expect.objectContaining({ state: "completed", calls: 1, attempt: 3, error: null, input_tokens: 100, output_tokens: 30 })]);
    expect(
      steps()
        .filter((step) => step.name === "api_request")
        .map((step) => step.summary.replace(/, \d+ ms/, "")),
    ).toEqual(["attempt 1, failed: 500, http 500, /responses", "attempt 2, failed: 500, http 500, /responses", "attempt 3, 200, /responses"]);
    store.close();
  });

  it("500 until Codex gives up: the failed attempts it sent before exiting, the turn still processing (its end is never sent)", () => {
    const { store, feed, turns, steps } = aStore();
    feed("exhausted");
    expect(turns()).toEqual([
      expect.objectContaining({ state: "processing", prompt: "fail until it gives up", calls: 0, attempt: 4, error: "500, http 500", finished_at: null }),
    ]);
    expect(steps().filter((step) => step.name === "api_request")).toHaveLength(4);
    store.close();
  });

  it("500 until Codex gives up, its spans sent as it went: the turn ended with no answer, so failed, with the attempts' error", () => {
    const { store, feed, turns, steps } = aStore();
    feed("exhausted-spans-sent");
    expect(turns()).toEqual([expect.objectContaining({ state: "failed", prompt: "fail until it gives up", calls: 0, attempt: 3, error: "500, http 500" })]);
    expect(
      steps()
        .map((step) => step.name)
        .at(-1),
    ).toBe("turn ended");
    expect(steps().map((step) => `${step.name}: ${step.summary}`)).toContain("stream error: the response stream failed, in Sampling");
    store.close();
  });

  it("killed while the API hangs: the prompt, processing, nothing more", () => {
    const { store, feed, turns } = aStore();
    feed("interrupted");
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "processing",
        prompt: "wait for an answer that never comes",
        last_step: "user_prompt: a prompt of 35 characters",
        calls: 0,
      }),
    ]);
    store.close();
  });

  it("a turn whose own span was lost (Codex's exporter shutting down mid-export): completed at its answer, with its call and tokens", () => {
    const { store, feed, turns, steps } = aStore();
    feed("turn-span-lost");
    expect(turns()).toEqual([
      expect.objectContaining({ state: "completed", prompt: "say hello", calls: 1, input_tokens: 100, output_tokens: 30, error: null }),
    ]);
    expect(steps().map((step) => step.name)).not.toContain("turn ended");
    store.close();
  });

  it("logs only (no trace_exporter): its events carry no trace nor turn, so the conversation is one lifecycle, with its prompt and answered call", () => {
    const { store, feed, turns, steps } = aStore();
    feed("logs-only");
    expect(turns()).toEqual([
      expect.objectContaining({
        state: "completed",
        prompt: "say hello, logs only",
        calls: 1,
        attempt: 1,
        input_tokens: 0,
        trace_id: null,
        session: "01a2236a-f62b-7411-8614-10aafb503764",
      }),
    ]);
    expect(steps().map((step) => step.name)).toEqual(["user_prompt", "api_request"]);
    store.close();
  });

  it("a resumed conversation (codex exec resume --last): two turns of one session", () => {
    const { store, feed, turns } = aStore();
    feed("resumed");
    const both = turns();
    expect(both.map((turn) => [turn.prompt, turn.state, turn.calls])).toEqual([
      ["first prompt of the session", "completed", 1],
      ["second prompt, resumed", "completed", 1],
    ]);
    expect(new Set(both.map((turn) => turn.session))).toEqual(new Set(["01a2235b-3e69-7811-8b02-d797231ac47d"]));
    store.close();
  });
});
