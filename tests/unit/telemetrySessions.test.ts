import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { sessionsView } from "../../lib/views/sessionsView";
import { TelemetrySessions, telemetrySessionLines } from "../../lib/views/telemetrySessionsView";
import { aGenAiExport, exportsOf, feed, type Export } from "../helpers/claudeCodeExports";
import { aRecording, tempParent } from "../helpers/stateDir";
import { thrown } from "../helpers/thrown";

// Claude Code's own exports (tests/fixtures/otlp) and a GenAI span, kept by the real store and read
// back as sessions, as the Sessions page, `reqwatch session list` and the MCP tools show them.
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** After the last record of the captured exports: every time below is from here, never the machine's clock. */
const RECEIVED = 1_795_713_600_000;
const SESSION = "5e55a1ed-0000-4000-8000-000000000001";
const open: TelemetryStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

/** One captured scenario, its Claude Code session renamed: several prompts of one session, as a real one sends them. */
function inSession(exports: Export[], sessionId: string): Export[] {
  return exports.map((item) => {
    const text = item.body.toString("utf8");
    const original = /"session\.id","value":\{"stringValue":"([^"]+)"/.exec(text)![1]!;
    return { ...item, body: Buffer.from(text.replaceAll(original, sessionId)) };
  });
}

/** A model call of an app using an instrumented SDK: a GenAI span in conversation `conversation`. */
function aGenAiCall(conversation: string, at: number): Export {
  return { signal: "traces", encoding: "json", body: Buffer.from(JSON.stringify(aGenAiExport(conversation, at))) };
}

function aStore() {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: DAY, maxBytes: 200e6 });
  open.push(store);
  return { file, store, sessions: new TelemetrySessions(file, 10 * MINUTE) };
}

describe("sessions received over OpenTelemetry", () => {
  it("a Claude Code session: its turns, model calls, tools, tokens and cost, per model; the turn still going on stuck after the source's threshold", () => {
    const { store, sessions } = aStore();
    feed(store, inSession(exportsOf("plain"), SESSION), RECEIVED);
    feed(store, inSession(exportsOf("tool"), SESSION), RECEIVED);
    // A prompt whose API call never answered: only its log events arrive.
    feed(
      store,
      inSession(
        exportsOf("interrupted").filter((item) => item.signal === "logs"),
        SESSION,
      ),
      RECEIVED,
    );

    const [row] = sessions.list(RECEIVED + MINUTE);
    expect(row).toMatchObject({
      source: "otel",
      sessionId: SESSION,
      from: "Claude Code",
      service: "claude-code",
      state: "active",
      requests: 3,
      turns: 3,
      calls: 3,
      tools: 1,
      inputTokens: 360,
      outputTokens: 90,
      costUsd: 0.00243,
      live: 1,
      stuck: 0,
    });
    // Active only while something in it goes on: its one turn still going on is stuck, so nothing does.
    expect(sessions.list(RECEIVED + 11 * MINUTE)[0]).toMatchObject({ state: "idle", live: 1, stuck: 1 });

    const view = sessions.get(SESSION, RECEIVED + 11 * MINUTE)!;
    expect(view.byModel).toEqual([
      {
        model: "claude-sonnet-4-5",
        calls: 3,
        inputTokens: 360,
        outputTokens: 90,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: 0.00243,
        estimatedCalls: 0,
        unpricedCalls: 0,
      },
    ]);
    expect(view.tools).toEqual([{ name: "Bash", uses: 1, failed: 0, durationMs: expect.any(Number) }]);
    expect(view.errors).toEqual([]);
    expect(view.stuck).toEqual([
      {
        requestId: view.requests[0]!.request.requestId,
        reason: expect.stringMatching(/^nothing received for 11m; last: user_prompt: a prompt of 9 characters/),
      },
    ]);
    // Its turns, newest first, as the requests table lists them (each a page of its own).
    expect(view.requests.map((message) => [message.request.requestId, message.request.state, message.request.sessionId])).toEqual([
      [expect.stringMatching(/^turn-\d+$/), "processing", SESSION],
      [expect.stringMatching(/^turn-\d+$/), "completed", SESSION],
      [expect.stringMatching(/^turn-\d+$/), "completed", SESSION],
    ]);
    expect(view.more).toBe(0);

    const lines = telemetrySessionLines(view, RECEIVED + 11 * MINUTE);
    expect(lines[0]).toBe(`Session ${SESSION} (idle, received over OpenTelemetry from Claude Code; started 16m 31s ago, last activity 12m 9s ago)`);
    expect(lines[1]).toBe("3 turns, 3 model calls, 1 tool use, 360 in / 90 out tokens, $0.0024, 1 stuck");
    expect(lines).toContain("  - claude-sonnet-4-5: 3 calls, 360 in / 90 out tokens, $0.0024");
    expect(lines).toContain("Tools (1): Bash (1)");
  });

  it("a turn that gave up retrying is an error of its session; a GenAI conversation is a session of the service that sent it, under the id the requests table shows", () => {
    const { store, sessions } = aStore();
    feed(store, exportsOf("exhausted"), RECEIVED);
    feed(store, [aGenAiCall("conv.7", RECEIVED - 1000)], RECEIVED);

    const list = sessions.list(RECEIVED + MINUTE);
    expect(list.map((row) => [row.from, row.turns, row.calls])).toEqual([
      ["support-bot", 0, 1],
      ["Claude Code", 1, 1],
    ]);
    // The id as every page shows it (letters, digits, _ and -), so its page and the table's session filter find it.
    expect(list[0]!.sessionId).toBe("conv_7");
    expect(sessions.get("conv_7", RECEIVED + MINUTE)).toMatchObject({
      session: { inputTokens: 50, outputTokens: 5 },
      byModel: [{ model: "claude-haiku-4-5", calls: 1 }],
      requests: [{ request: { requestId: expect.stringMatching(/^call-\d+$/), state: "completed" } }],
    });

    const exhausted = sessions.get(list[1]!.sessionId, RECEIVED + MINUTE)!;
    expect(exhausted.errors).toEqual([
      { requestId: exhausted.requests[0]!.request.requestId, state: "failed", at: expect.any(Number), error: "529, Overloaded after 11 attempts" },
    ]);
    expect(telemetrySessionLines(exhausted, RECEIVED + MINUTE)).toContain(
      `  - ${exhausted.requests[0]!.request.requestId} (failed): 529, Overloaded after 11 attempts`,
    );

    expect(sessions.get("nobody", RECEIVED)).toBeNull();
    expect(thrown(() => sessions.get("not an id!", RECEIVED))).toMatchObject({ code: "BAD_INPUT" });
  });

  it("the usage by session names each session as its page resolves it; a call that said no cost is estimated at list prices, and says so", () => {
    const { store, sessions } = aStore();
    feed(store, [aGenAiCall("support.team:conversation 1", RECEIVED - 1000)], RECEIVED);
    const [row] = store.usage().bySession;
    expect(row).toMatchObject({
      session: "support.team:conversation 1",
      sessionId: "support_team_conversation_1",
      costUsd: 0.000075,
      estimatedCalls: 1,
      unpricedCalls: 0,
    });
    const view = sessions.get(row!.sessionId!, RECEIVED + MINUTE)!;
    expect(view.session.sessionId).toBe("support_team_conversation_1");
    expect(telemetrySessionLines(view, RECEIVED + MINUTE)[1]).toMatch(/^1 model call, .*50 in \/ 5 out tokens, \$0\.0001 estimated$/);
  });

  it("nothing received yet: no session, and no store is made by looking", () => {
    const file = path.join(tempParent(), "telemetry.db");
    const sessions = new TelemetrySessions(file, 10 * MINUTE);
    expect(sessions.list(RECEIVED)).toEqual([]);
    expect(sessions.get(SESSION, RECEIVED)).toBeNull();
    expect(fs.existsSync(file)).toBe(false);
  });

  it("the sessions list holds the folder's and the received ones, most recently active first", () => {
    const { store, sessions } = aStore();
    feed(store, exportsOf("plain"), RECEIVED);
    let now = RECEIVED;
    const { tracker, reader } = aRecording({ now: () => now });
    tracker.create({ requestId: "r1", workspace: "w", sessionId: "from-requests", state: "queued" });
    now += MINUTE;

    expect(sessionsView(reader, sessions).map((row) => [row.source, row.sessionId])).toEqual([
      [null, "from-requests"],
      // The session.id Claude Code gave the captured prompt.
      ["otel", "09c50f3d-627c-46e9-84ea-8248d62ab9c1"],
    ]);
    // Without the read model, the folder's alone.
    expect(sessionsView(reader).map((row) => row.source)).toEqual([null]);
  });
});
