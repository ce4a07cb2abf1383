import path from "node:path";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { readOne } from "../../lib/sources/sourceQueue";
import { telemetryQueue } from "../../lib/sources/telemetryQueue";
import { openTelemetryStore } from "../../lib/telemetry/store/readStore";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { lifecycleFacts } from "../../lib/views/lifecycleFacts";
import type { SourcePart, SourceStep } from "../../lib/sources/sourceMessage";
import { timelineOf, type TimelineItem } from "../../lib/views/timelineView";
import { exportsOf, feed, NO_REDACTION } from "../helpers/claudeCodeExports";
import { recordedExports } from "../helpers/recordedExports";
import { tempParent } from "../helpers/stateDir";

// Claude Code 2.1.332's own exports (tests/fixtures/otlp) kept by a real store, read back as the
// turn's page reads them, and drawn as its timeline.

/** A scenario's first turn as its page reads it: the row, its steps and parts. */
function aTurn(scenario: string, signals?: "logs") {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  feed(
    store,
    exportsOf(scenario).filter((item) => !signals || item.signal === signals),
  );
  store.close();
  const db = openTelemetryStore(file);
  try {
    return readOne(db, telemetryQueue(file), "turn-1", Date.now(), null)!;
  } finally {
    db.close();
  }
}

/** A scenario's lifecycle `id` as its page reads it, from a client's captured exports (tests/fixtures/otlp/<client>/<scenario>), their times moved to now. */
function aReceived(client: string, scenario: string, id = "turn-1") {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  for (const item of recordedExports(path.resolve(__dirname, "../fixtures/otlp", client, scenario)))
    ingestExport(
      store,
      NO_REDACTION,
      item.signal,
      decodeExport(item.signal, item.contentType === "application/json" ? "json" : "protobuf", item.gzip ? zlib.gunzipSync(item.body) : item.body),
    );
  store.close();
  const db = openTelemetryStore(file);
  try {
    return readOne(db, telemetryQueue(file), id, Date.now(), null)!;
  } finally {
    db.close();
  }
}

const aGeminiTurn = (scenario: string) => aReceived("gemini-cli-0.61.0", scenario);
const aCodexTurn = (scenario: string) => aReceived("codex-0.171.0", scenario);

/** Every item of a timeline, however deep. */
const everyItem = (list: readonly TimelineItem[]): TimelineItem[] => list.flatMap((item) => [item, ...everyItem(item.children)]);

/** The tree as a person reads it: each item's accessible name, indented by depth. */
function outline(items: readonly TimelineItem[], depth = 0): string[] {
  return items.flatMap((item) => [`${"  ".repeat(depth)}${item.title}`, ...outline(item.children, depth + 1)]);
}

describe("a received turn's timeline", () => {
  it("a turn that ran a tool: each call and the tool once, merged from every record of it, nested in the turn, the slowest marked", () => {
    const turn = aTurn("tool");
    const timeline = timelineOf(turn.steps!, turn.parts!)!;
    expect(outline(timeline.items)).toEqual([
      "turn ended, 352 ms",
      "  user_prompt, instant",
      "  model call, claude-sonnet-4-5, 95 ms, the slowest",
      "  tool, Bash, 63 ms",
      "    waited for permission, 16 ms",
      "    tool ran, 45 ms",
      "  model call, claude-sonnet-4-5, 26 ms",
    ]);
    const [turnBar] = timeline.items;
    const call = turnBar!.children[1]!;
    expect(call.records.map((record) => record.name)).toEqual(["model call", "api_request"]);
    expect(call.summary).toBe("120 in / 30 out tokens, $0.0008, first token 41 ms");
    const tool = turnBar!.children[2]!;
    expect(tool.records.map((record) => record.name)).toEqual(["tool_decision", "tool Bash", "tool_result"]);
    // Widths are the share of the axis each took.
    expect(turnBar!.offset).toBe(0);
    expect(turnBar!.width).toBeCloseTo(100, 0);
    expect(call.width / tool.width).toBeCloseTo(95 / 62, 0);
  });

  it("a call that gave up after 11 attempts: the call failed in red with its error, the give-up an event with its own", () => {
    const turn = aTurn("exhausted");
    const timeline = timelineOf(turn.steps!, turn.parts!)!;
    expect(outline(timeline.items)).toEqual([
      "turn ended, 3m 5s",
      "  user_prompt, instant",
      "  model call, claude-sonnet-4-5, 3m 5s, 11 attempts, failed: 529, Overloaded",
      // Each attempt inside the call, from its start to the next one's: every one failed, the last with the error.
      ...["538 ms", "1.3 s", "2.4 s", "4.1 s", "8.2 s", "17.5 s", "35.2 s", "37.9 s", "38.5 s", "39.9 s"].map(
        (took, i) => `    attempt ${i + 1}, ${took}, failed`,
      ),
      "    attempt 11, 8 ms, failed: 529, Overloaded",
      "  api_retries_exhausted, instant, failed: 529, Overloaded after 11 attempts",
    ]);
    // Refused every time, it said no tokens: no price beside its error.
    expect(timeline.items[0]!.children[1]!.summary).toBe("11 attempts");
  });

  it("a turn seen through its log events alone: no span to nest in, each call once", () => {
    const turn = aTurn("tool", "logs");
    expect(outline(timelineOf(turn.steps!, turn.parts!)!.items)).toEqual([
      "user_prompt, instant",
      "model call, claude-sonnet-4-5, 87 ms, the slowest",
      "tool, Bash, 48 ms",
      "model call, claude-sonnet-4-5, 23 ms",
    ]);
  });

  it("the turn's row in words: times as times, durations as durations, nothing it does not know", () => {
    const turn = aTurn("tool");
    const facts = lifecycleFacts(turn.stored!);
    const text = facts.map((fact) => `${fact.label}: ${fact.value}`);
    expect(text).toEqual(
      expect.arrayContaining([
        "Kind: turn",
        "Service: claude-code",
        "State: completed",
        "Took: 352 ms",
        "Model calls: 2",
        "Tool uses: 1",
        "Tokens: 240 in / 60 out (cache read 0, cache write 0)",
        "Cost: $0.0016",
      ]),
    );
    expect(text).toContainEqual(expect.stringMatching(/^Started: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/));
    expect(facts.find((fact) => fact.label === "Started")?.at).toBe(turn.stored!.started_at);
    expect(text.join("\n")).not.toMatch(/null|NULL|undefined|\b1\d{12}\b/);
  });

  it("a call named after its span or record (no request id) is that step's bar; a part no step tells of is drawn from its duration; steps that name each other as parent do not loop", () => {
    const steps: SourceStep[] = [
      { key: "span:a1", at: 1000, startAt: 400, name: "chat gpt-4o", summary: "gpt-4o, 10 in / 2 out", detail: { request_id: null } },
      { key: "span:x", at: 900, startAt: 500, parentKey: "span:y", name: "x", summary: "", detail: {} },
      { key: "span:y", at: 950, startAt: 450, parentKey: "span:x", name: "y", summary: "", detail: {} },
      { key: "log:r1", at: 990, startAt: 960, name: "api_response", summary: "", detail: {} },
    ];
    const parts: SourcePart[] = [
      { kind: "call", id: "a1", at: 1000, fields: { model: "gpt-4o", inputTokens: 10, outputTokens: 2, success: false, error: "429 rate_limited" } },
      { kind: "tool", id: "t1", at: 800, fields: { name: "search", durationMs: 200 } },
      // Named after the record that told of it (a client with no request id).
      { kind: "call", id: "log:r1", at: 990, fields: { model: "gemini-3.8-flash" } },
    ];
    const timeline = timelineOf(steps, parts)!;
    const titles = outline(timeline.items);
    expect(titles).toContain("model call, gpt-4o, 600 ms, failed: 429 rate_limited, the slowest");
    expect(titles).toContain("tool, search, 200 ms");
    expect(titles).toContain("model call, gemini-3.8-flash, 30 ms");
    expect(titles).toEqual(expect.arrayContaining(["y, 500 ms", "x, 400 ms"]));
    expect(timeline.items[0]).toMatchObject({ offset: 0, startAt: 400 });
    expect(timeline.endAt).toBe(1000);
  });

  it("a Gemini CLI turn: each model call once, its llm_call span and its api_response event one bar; each tool's tool_call event with its tool", () => {
    const turn = aGeminiTurn("tool");
    const items = (function flat(list: readonly TimelineItem[]): TimelineItem[] {
      return list.flatMap((item) => [item, ...flat(item.children)]);
    })(timelineOf(turn.steps!, turn.parts!)!.items);
    const calls = items.filter((item) => item.kind === "call");
    expect(calls.map((call) => call.title)).toEqual([
      "model call, gemini-3.5-flash-lite, router, 25 ms",
      "model call, gemini-3.8-flash, 111 ms, the slowest",
      "model call, gemini-3.8-flash, 15 ms",
    ]);
    for (const call of calls) expect(call.records.map((record) => record.name)).toEqual(["model call", "api_response"]);
    expect(items.filter((item) => item.label === "model call" && item.kind === "step")).toEqual([]);
    const tools = items.filter((item) => item.kind === "tool");
    expect(tools.map((tool) => [tool.name, tool.error, tool.records.map((record) => record.name)])).toEqual([
      ["read_file", null, ["tool_call"]],
      ["read_file", expect.stringMatching(/^File not found/), ["tool_call"]],
    ]);
  });

  it("a Codex turn: each model call one bar, its HTTP attempts (codex.api_request) and its answer's span (handle_responses) merged, of the turn's model", () => {
    const plain = everyItem(timelineOf(aCodexTurn("plain").steps!, aCodexTurn("plain").parts!)!.items);
    expect(plain.filter((item) => item.label === "api_request")).toEqual([]);
    expect(plain.filter((item) => item.kind === "call").map((call) => [call.name, call.records.map((record) => record.name)])).toEqual([
      ["gpt-5-codex", ["api_request", "model call"]],
    ]);
    const retried = aCodexTurn("retry");
    const calls = everyItem(timelineOf(retried.steps!, retried.parts!)!.items).filter((item) => item.kind === "call");
    expect(calls.map((call) => [call.attempts, call.error, call.records.map((record) => record.name)])).toEqual([
      [3, null, ["api_request", "api_request", "api_request", "model call"]],
    ]);
    expect(calls[0]!.title).toMatch(/^model call, gpt-5-codex, \d+ ms, 3 attempts$/);
    // Two calls of one turn (the tool's answer asked for again): each its own attempt and answer.
    const tool = aCodexTurn("tool");
    const toolItems = everyItem(timelineOf(tool.steps!, tool.parts!)!.items);
    expect(toolItems.filter((item) => item.kind === "call").map((call) => call.records.map((record) => record.name))).toEqual([
      ["api_request", "model call"],
      ["api_request", "model call"],
    ]);
    expect(toolItems.filter((item) => item.label === "api_request")).toEqual([]);
  });

  it("a Codex turn whose attempts were never answered (retries exhausted): no call to draw them in, each attempt its own failed bar", () => {
    const turn = aCodexTurn("exhausted");
    const items = everyItem(timelineOf(turn.steps!, turn.parts!)!.items);
    expect(items.filter((item) => item.kind === "call")).toEqual([]);
    expect(items.filter((item) => item.label === "api_request").map((item) => item.error)).toEqual([
      "500, http 500",
      "500, http 500",
      "500, http 500",
      "500, http 500",
    ]);
  });

  it("Codex attempts that do not read as one call's (two answered between two answers: an answer's span lost) stay apart", () => {
    const attempt = (key: string, at: number, attempt: number, error?: string): SourceStep => ({
      key,
      at,
      startAt: at - 5,
      name: "api_request",
      summary: "",
      detail: { attempt, attempt_of_next_answer: true },
      ...(error && { error }),
    });
    const steps = [
      attempt("log:a1", 100, 1),
      attempt("log:b1", 300, 1),
      { key: "span:answer", at: 400, startAt: 350, name: "model call", summary: "", detail: {} },
    ];
    const items = timelineOf(steps, [{ kind: "call", id: "answer", at: 400, fields: {} }])!.items;
    expect(everyItem(items).filter((item) => item.label === "api_request")).toHaveLength(2);
  });

  it("a Gemini tool's span (no call id) and its tool_call event are one bar when each is the other's only match; two tools of one name in one batch stay two", () => {
    const schedule: SourceStep = { key: "span:batch", at: 200, startAt: 0, name: "tools scheduled", summary: "", detail: {} };
    const span = (id: string, startAt: number, at: number): SourceStep => ({
      key: `span:${id}`,
      at,
      startAt,
      parentKey: "span:batch",
      name: "tool read_file",
      summary: "",
      detail: {},
    });
    const event = (id: string, startAt: number, at: number): SourceStep => ({
      key: `log:${id}`,
      at,
      startAt,
      parentKey: "span:batch",
      partKey: `tool ${id}`,
      name: "tool_call",
      summary: "",
      detail: {},
    });
    const tool = (id: string, at: number): SourcePart => ({ kind: "tool", id, at, fields: { name: "read_file", success: true } });
    const one = everyItem(timelineOf([schedule, span("s1", 20, 60), event("t1", 10, 70)], [tool("t1", 70)])!.items);
    expect(one.filter((item) => item.label === "tool read_file")).toEqual([]);
    expect(one.filter((item) => item.kind === "tool").map((item) => item.records.map((record) => record.name))).toEqual([["tool_call", "tool read_file"]]);
    // The two read_file of the captured batch: their times overlap every way, and neither record says which is which.
    const gemini = aGeminiTurn("tool");
    const two = everyItem(timelineOf(gemini.steps!, gemini.parts!)!.items);
    expect(two.filter((item) => item.kind === "tool")).toHaveLength(2);
    expect(two.filter((item) => item.kind === "tool").every((item) => item.records.length === 1)).toBe(true);
    // The same tool twice, one after the other in one batch: each span overlaps only its own event.
    const apart = everyItem(
      timelineOf([schedule, span("s1", 20, 60), event("t1", 10, 70), span("s2", 100, 140), event("t2", 90, 150)], [tool("t1", 70), tool("t2", 150)])!.items,
    );
    expect(apart.filter((item) => item.kind === "tool").map((item) => item.records.map((record) => record.name))).toEqual([
      ["tool_call", "tool read_file"],
      ["tool_call", "tool read_file"],
    ]);
    // On a busy machine the event is written some milliseconds after the span ended: still the one tool (its records in the order they happened).
    const late = everyItem(timelineOf([schedule, span("s1", 20, 22), event("t1", 27, 29)], [tool("t1", 29)])!.items);
    expect(late.filter((item) => item.kind === "tool").map((item) => item.records.map((record) => record.name))).toEqual([["tool read_file", "tool_call"]]);
    // And one after the other, each late: each with its nearest.
    const lateTwice = everyItem(
      timelineOf([schedule, span("s1", 20, 22), event("t1", 27, 29), span("s2", 100, 102), event("t2", 108, 110)], [tool("t1", 29), tool("t2", 110)])!.items,
    );
    expect(lateTwice.filter((item) => item.kind === "tool").map((item) => [item.startAt, item.records.map((record) => record.name)])).toEqual([
      [20, ["tool read_file", "tool_call"]],
      [100, ["tool read_file", "tool_call"]],
    ]);
  });

  it("an OpenInference call told twice (its own span and the Anthropic SDK's inside it) is one bar; a failed one keeps the attempts the inner span said", () => {
    const plain = aReceived("openinference-anthropic-0.2.8", "plain", "call-1");
    expect(outline(timelineOf(plain.steps!, plain.parts!)!.items)).toEqual([expect.stringMatching(/^model call, claude-sonnet-4-5, \d+ ms$/)]);
    const failed = aReceived("openinference-anthropic-0.2.8", "error", "call-2");
    const [call, ...rest] = timelineOf(failed.steps!, failed.parts!)!.items;
    expect(rest).toEqual([]);
    expect(call!.title).toMatch(/^model call, claude-sonnet-4-5, \d+ ms, 2 attempts, failed: OverloadedError: 529 /);
    expect(call!.records).toHaveLength(2);
  });

  it("an AI SDK 6 call tried three times, each try a span of its own: three bars, each saying which try it was", () => {
    const run = aReceived("ai-sdk-6.0.325", "retried", "agent-4");
    const calls = outline(timelineOf(run.steps!, run.parts!)!.items)
      .map((line) => line.trim())
      .filter((line) => line.startsWith("model call"));
    expect(calls).toEqual([
      expect.stringMatching(/^model call, claude-sonnet-4-5, \d+ ms, attempt 1 of 3, failed: AI_APICallError: Overloaded/),
      expect.stringMatching(/^model call, claude-sonnet-4-5, \d+ ms, attempt 2 of 3, failed: AI_APICallError: Overloaded/),
      expect.stringMatching(/^model call, claude-sonnet-4-5, \d+ ms, attempt 3 of 3$/),
    ]);
  });

  it("a turn whose span holds nothing by its parents (Codex's: what ran in it is told by spans the mapping does not keep) holds what happened within its time", () => {
    const steps: SourceStep[] = [
      { key: "span:turn", at: 1000, startAt: 0, name: "turn ended", summary: "", detail: {} },
      { key: "log:prompt", at: 5, name: "user_prompt", summary: "", detail: {} },
      { key: "span:answer", at: 900, startAt: 100, parentKey: "span:not-kept", name: "model call", summary: "", detail: {} },
    ];
    expect(outline(timelineOf(steps, [{ kind: "call", id: "answer", at: 900, fields: {} }])!.items)).toEqual([
      "turn ended, 1.0 s",
      "  user_prompt, instant",
      "  model call, 800 ms",
    ]);
  });
});
