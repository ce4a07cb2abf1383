import fs from "node:fs";
import path from "node:path";

const DAY = 24 * 60 * 60_000;

/** A small deterministic generator, so a failure is the same on every run. */
function numbers(start: number) {
  let state = start;
  return (below: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % below;
  };
}

function write(file: string, lines: readonly (object | string)[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + "\n");
}

const iso = (at: number) => new Date(at).toISOString();

/** The one call above 200k input tokens, 20 days before now: priced at the long-context rate for the whole request. */
export const LONG_CONTEXT_CALL = { model: "claude-sonnet-4-5", input: 250_000, output: 1_000, daysAgo: 20 } as const;

/**
 * Agents' files as months of use would leave them, in a home folder's .claude, .codex and .gemini,
 * every time relative to `now` (several days and months back): Claude Code sessions with several
 * models and cache tokens, each answer written twice (the second with its full output), a session
 * resumed with copies of its history's lines, a subagent's sidechain, Claude Code's made-up
 * `<synthetic>` error lines, an old transcript with `costUSD` written, a call above 200k input, a
 * model no price table knows and a line that is not JSON; a Codex rollout over days with its model
 * changed mid-way and counts written again; a Gemini session with thoughts and messages written again.
 */
export function aUsageHistory(home: string, now = Date.now()): void {
  const next = numbers(7);
  const claudeModels = ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"];
  const project = path.join(home, ".claude", "projects", "-work-shop");
  const cwd = "/work/shop";
  let id = 0;
  const answer = (session: string, at: number, model: string, extra: object = {}) => {
    id++;
    const usage = {
      input_tokens: 3 + next(5000),
      output_tokens: 10 + next(3000),
      cache_read_input_tokens: next(4) === 0 ? 0 : next(90_000),
      cache_creation_input_tokens: next(3) === 0 ? 0 : next(20_000),
    };
    const line = (output: number) => ({
      parentUuid: null,
      isSidechain: false,
      userType: "external",
      cwd,
      sessionId: session,
      version: "2.1.332",
      type: "assistant",
      uuid: `u-${id}-${output}`,
      timestamp: iso(at),
      requestId: `req_gen_${id}`,
      message: {
        id: `msg_gen_${id}`,
        type: "message",
        role: "assistant",
        model,
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        usage: { ...usage, output_tokens: output },
      },
      ...extra,
    });
    // Written once as the answer streamed (part of its output), and again whole.
    return [line(Math.max(1, Math.floor(usage.output_tokens / 3))), line(usage.output_tokens)];
  };
  const first: (object | string)[] = [];
  for (let i = 0; i < 40; i++) first.push(...answer("gen-session-1", now - (70 - i * 1.7) * DAY - next(DAY), claudeModels[i % 3]!));
  first.push({ type: "user", sessionId: "gen-session-1", timestamp: iso(now - 2 * DAY), message: { role: "user", content: "a prompt" } });
  // Claude Code's own error line: no call was made.
  first.push({
    type: "assistant",
    isApiErrorMessage: true,
    sessionId: "gen-session-1",
    version: "2.1.332",
    timestamp: iso(now - 2 * DAY + 1000),
    uuid: "synthetic-1",
    message: {
      id: "synthetic-msg-1",
      model: "<synthetic>",
      role: "assistant",
      content: [{ type: "text", text: "API Error: 529 overloaded" }],
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    },
  });
  first.push('{"type":"assistant","message":{"usage":{"input_tokens":5 this line was cut short');
  write(path.join(project, "gen-session-1.jsonl"), first);
  // Resumed: the history's last answers copied under the new session, then its own.
  const resumed = first.slice(60, 76).map((line) => ({ ...(line as Record<string, unknown>), sessionId: "gen-session-2" }));
  for (let i = 0; i < 6; i++) resumed.push(...answer("gen-session-2", now - (5 - i * 0.8) * DAY, claudeModels[(i + 1) % 3]!));
  write(path.join(project, "gen-session-2.jsonl"), resumed);
  // A subagent's sidechain: calls of its own, and a copy of one of its session's.
  const sidechain = [
    ...answer("gen-session-2", now - 3 * DAY, "claude-haiku-4-5", { isSidechain: true, agentId: "a1" }),
    { ...(resumed.at(-1) as Record<string, unknown>), isSidechain: true },
  ];
  write(path.join(project, "gen-session-2", "subagents", "agent-a1.jsonl"), sidechain);
  // An old transcript, with the cost Claude Code then wrote on each line.
  const old = Array.from({ length: 5 }, (_, i) => ({
    type: "assistant",
    sessionId: "gen-old",
    version: "1.0.30",
    cwd: "/work/old",
    timestamp: iso(now - (100 + i) * DAY),
    requestId: `req_old_${i}`,
    costUSD: 0.0123 + i / 1000,
    message: { id: `msg_old_${i}`, model: "claude-sonnet-4-5", role: "assistant", content: [], usage: { input_tokens: 1000 + i, output_tokens: 200 } },
  }));
  write(path.join(home, ".claude", "projects", "-work-old", "gen-old.jsonl"), old);
  // One call above 200k input, and one of a model no table prices.
  write(path.join(home, ".claude", "projects", "-work-big", "gen-long.jsonl"), [
    {
      type: "assistant",
      sessionId: "gen-long",
      version: "2.1.332",
      cwd: "/work/big",
      timestamp: iso(now - LONG_CONTEXT_CALL.daysAgo * DAY),
      requestId: "req_long",
      message: {
        id: "msg_long",
        model: LONG_CONTEXT_CALL.model,
        role: "assistant",
        content: [],
        usage: { input_tokens: LONG_CONTEXT_CALL.input, output_tokens: LONG_CONTEXT_CALL.output, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      },
    },
    {
      type: "assistant",
      sessionId: "gen-long",
      version: "2.1.332",
      cwd: "/work/big",
      timestamp: iso(now - 19 * DAY),
      requestId: "req_unknown",
      message: { id: "msg_unknown", model: "claude-unreleased-9", role: "assistant", content: [], usage: { input_tokens: 500, output_tokens: 50 } },
    },
  ]);

  // Codex: a thread over three days, its model changed, a count written again with the same total.
  const thread = "01b00000-0000-7000-8000-000000000001";
  const rolloutAt = now - 40 * DAY;
  const codexLines: object[] = [{ timestamp: iso(rolloutAt), type: "session_meta", payload: { id: thread, cwd: "/work/codex", cli_version: "0.171.0" } }];
  const totals = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, total_tokens: 0 };
  for (let i = 0; i < 12; i++) {
    const at = rolloutAt + i * 0.3 * DAY;
    if (i % 6 === 0) codexLines.push({ timestamp: iso(at), type: "turn_context", payload: { model: i < 6 ? "gpt-5-codex" : "gpt-5", cwd: "/work/codex" } });
    const input = 2000 + next(30_000);
    const last = { input_tokens: input, cached_input_tokens: next(input), output_tokens: 50 + next(2000), reasoning_output_tokens: next(500), total_tokens: 0 };
    last.total_tokens = last.input_tokens + last.output_tokens;
    for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += last[key];
    const count = {
      timestamp: iso(at + 1000),
      type: "event_msg",
      payload: { type: "token_count", info: { total_token_usage: { ...totals }, last_token_usage: last, model_context_window: 258400 }, rate_limits: null },
    };
    codexLines.push(count);
    if (i % 4 === 1) codexLines.push({ ...count, timestamp: iso(at + 2000) });
  }
  codexLines.push({ timestamp: iso(rolloutAt + 4 * DAY), type: "event_msg", payload: { type: "token_count", info: null, rate_limits: null } });
  const day = new Date(rolloutAt).toISOString().slice(0, 10).split("-");
  write(
    path.join(home, ".codex", "sessions", day[0]!, day[1]!, day[2]!, `rollout-${iso(rolloutAt).slice(0, 19).replace(/:/g, "-")}-${thread}.jsonl`),
    codexLines,
  );

  // Gemini: a session over two days, with thoughts, a message written again once its tokens were known.
  const geminiAt = now - 33 * DAY;
  const geminiLines: object[] = [{ sessionId: "gen-gemini-1", projectHash: "abc", startTime: iso(geminiAt), lastUpdated: iso(geminiAt), kind: "main" }];
  for (let i = 0; i < 8; i++) {
    const at = geminiAt + i * 0.4 * DAY;
    geminiLines.push({ id: `g-user-${i}`, timestamp: iso(at), type: "user", content: [{ text: `prompt ${i}` }] });
    const input = 5000 + next(40_000);
    const cached = next(input);
    const output = 20 + next(1500);
    const thoughts = next(800);
    const message = {
      id: `g-model-${i}`,
      timestamp: iso(at + 5000),
      type: "gemini",
      content: "an answer",
      thoughts: [],
      model: i % 2 ? "gemini-2.5-pro" : "gemini-2.5-flash",
    };
    if (i % 3 === 0) geminiLines.push(message);
    geminiLines.push({ ...message, tokens: { input, output, cached, thoughts, tool: 0, total: input + output + thoughts } });
    geminiLines.push({ $set: { lastUpdated: iso(at + 5000) } });
  }
  write(path.join(home, ".gemini", "tmp", "gen-project", "chats", "session-gen-gemini-1.jsonl"), geminiLines);
  fs.writeFileSync(path.join(home, ".gemini", "tmp", "gen-project", ".project_root"), "/work/gemini\n");
}
