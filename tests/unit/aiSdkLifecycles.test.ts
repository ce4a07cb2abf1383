import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { Signal } from "../../lib/telemetry/records";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { formatCost } from "../../lib/model/money";
import { feed, type Export } from "../helpers/claudeCodeExports";
import { tempParent } from "../helpers/stateDir";

// The Vercel AI SDK's own exports (tests/fixtures/otlp/ai-sdk-*, captured from the real SDK against
// a mock of the Messages API: see the README there) fed to a store as the receiver would, and its
// lifecycles read back: one per generateText/streamText, its model calls and tools inside.

const FIXTURES = path.resolve(__dirname, "../fixtures/otlp");

function exportsOf(folder: string, scenario: string): Export[] {
  const dir = path.join(FIXTURES, folder, scenario);
  return fs
    .readdirSync(dir)
    .sort()
    .map((file) => ({ signal: /-(traces|logs|metrics)\./.exec(file)![1] as Signal, body: fs.readFileSync(path.join(dir, file)), encoding: "json" as const }));
}

/** A scenario fed to a fresh store: its lifecycles' rows, and each one's steps. */
function lifecyclesOf(folder: string, scenario: string, order: (exports: Export[]) => Export[] = (exports) => exports) {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  feed(store, order(exportsOf(folder, scenario)));
  store.close();
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare("SELECT * FROM lifecycles ORDER BY seq").all() as Record<string, unknown>[];
    const steps = db.prepare("SELECT seq, name, summary, parent_key AS parentKey FROM steps ORDER BY at, name").all() as {
      seq: number;
      name: string;
      summary: string;
      parentKey: string | null;
    }[];
    return { rows, steps };
  } finally {
    db.close();
  }
}

const VERSIONS = [
  ["the AI SDK 6 (experimental_telemetry)", "ai-sdk-6.0.325"],
  ["the AI SDK 7 (LegacyOpenTelemetry)", "ai-sdk-7.0.173-legacy"],
  ["the AI SDK 7 (OpenTelemetry, the GenAI conventions)", "ai-sdk-7.0.173-otel"],
] as const;

describe.each(VERSIONS)("%s", (_, folder) => {
  it("a plain prompt: one run, completed, with its one call's model and tokens", () => {
    const { rows } = lifecyclesOf(folder, "plain");
    expect(rows).toEqual([
      expect.objectContaining({
        kind: "agent",
        state: "completed",
        model: "claude-sonnet-4-5",
        calls: 1,
        tools: 0,
        input_tokens: 120,
        output_tokens: 30,
        error: null,
      }),
    ]);
  });

  it("a tool loop of two steps: one run, two calls, one tool, every step inside it", () => {
    const { rows, steps } = lifecyclesOf(folder, "tool");
    expect(rows).toEqual([expect.objectContaining({ kind: "agent", state: "completed", calls: 2, tools: 1, input_tokens: 240, output_tokens: 60 })]);
    expect(steps.filter((step) => step.parentKey === null)).toHaveLength(1);
  });

  it("the same run however its spans arrive: children after their parent", () => {
    const { rows } = lifecyclesOf(folder, "tool", (exports) => exports.reverse());
    expect(rows).toEqual([expect.objectContaining({ kind: "agent", state: "completed", calls: 2, tools: 1 })]);
  });

  it("retried after 529 twice: completed, one call", () => {
    const { rows } = lifecyclesOf(folder, "retried");
    expect(rows).toEqual([expect.objectContaining({ kind: "agent", state: "completed", calls: 1, error: null, input_tokens: 120 })]);
  });

  it("retries exhausted: failed with the error, its three attempts", () => {
    const { rows } = lifecyclesOf(folder, "exhausted");
    expect(rows).toEqual([
      expect.objectContaining({
        kind: "agent",
        state: "failed",
        calls: 1,
        attempt: 3,
        error: expect.stringMatching(/Failed after 3 attempts\. Last error: (AI_APICallError: )?Overloaded/),
      }),
    ]);
    // Refused every time, with no tokens: a known $0, not an unknown cost.
    expect(rows).toEqual([expect.objectContaining({ cost_usd: 0, unpriced_calls: 0 })]);
  });

  it("a stream aborted after its first words: failed, its spans saying only that it stopped without an end, so the abort is a guess", () => {
    const { rows } = lifecyclesOf(folder, "aborted");
    expect(rows).toEqual([expect.objectContaining({ kind: "agent", state: "failed", error: "ended before the model finished (aborted?)" })]);
    // It may have been billed for what it generated before it stopped: no $0 estimate, every call unpriced (its cost reads "unknown").
    expect(rows[0]).toMatchObject({ cost_usd: 0, estimated_calls: 0, unpriced_calls: rows[0]!.calls });
    // Never a dollar figure ("—" where the run counts no call of its own: the AI SDK 6's stream span).
    expect(formatCost({ calls: rows[0]!.calls as number, costUsd: 0, estimatedCalls: 0, unpricedCalls: rows[0]!.unpriced_calls as number })).toMatch(
      /^(unknown|—)$/,
    );
  });

  it("a call its caller aborted (its abort signal; the SDK records the AbortError): failed, saying plainly the caller aborted it", () => {
    const { rows } = lifecyclesOf(folder, "aborted-call");
    expect(rows).toEqual([
      expect.objectContaining({ kind: "agent", state: "failed", calls: 1, error: "aborted by the caller: This operation was aborted", unpriced_calls: 1 }),
    ]);
  });
});

describe("the AI SDK 6's span per attempt", () => {
  it("two failed tries then an answer: one call of three attempts, each try's error in its step", () => {
    const { rows, steps } = lifecyclesOf("ai-sdk-6.0.325", "retried");
    expect(rows).toEqual([expect.objectContaining({ state: "completed", calls: 1, attempt: 3 })]);
    expect(steps.filter((step) => step.name === "ai.generateText.doGenerate").map((step) => step.summary)).toEqual([
      expect.stringMatching(/failed: AI_APICallError: Overloaded/),
      expect.stringMatching(/failed: AI_APICallError: Overloaded/),
      expect.stringMatching(/120 in \/ 30 out/),
    ]);
  });
});
