// A generated history of the three agents' own session files, as a heavy user's home holds them:
// `node bench/agentHistory.mjs <home> --bytes 1e9 [--variant n] [--now <ISO time>]` writes
// <home>/.claude/projects/..., <home>/.codex/sessions/..., <home>/.gemini/tmp/...
// Every line's shape is copied from what the real CLIs wrote (tests/fixtures/claude-code-transcripts,
// codex-sessions, gemini-sessions); what varies is how many, how big and when. Most bytes are tool
// results and file contents, as in real transcripts (Claude Code writes a Read's file twice: in the
// tool result and in its `toolUseResult`). The same variant and `now` write the same bytes.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const DAY_MS = 86_400_000;
const HISTORY_DAYS = 60;
/** The share of the bytes each agent's sessions take: most users run Claude Code most. */
const AGENT_SHARES = [
  ["claude", 0.6],
  ["codex", 0.25],
  ["gemini", 0.15],
];
const MODELS = {
  claude: [
    ["claude-sonnet-4-5", 0.6],
    ["claude-opus-4-1", 0.25],
    ["claude-haiku-4-5", 0.15],
  ],
  codex: [
    ["gpt-5-codex", 0.7],
    ["gpt-5", 0.3],
  ],
  gemini: [
    ["gemini-2.5-pro", 0.55],
    ["gemini-2.5-flash", 0.45],
  ],
};
const CLAUDE_VERSION = "2.1.332";
const CODEX_VERSION = "0.171.0";

/** sfc32: a small generator of numbers from a start value, so a variant always writes the same history. */
function randomFrom(variant) {
  let a = 0x9e3779b9 ^ variant;
  let b = 0x243f6a88 ^ (variant * 31);
  let c = 0xb7e15162;
  let d = 1;
  const next = () => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 20; i++) next();
  const random = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (list) => list[Math.floor(next() * list.length)],
    weighted: (pairs) => {
      let r = next();
      for (const [value, weight] of pairs) if ((r -= weight) < 0) return value;
      return pairs.at(-1)[0];
    },
    /** Log-normal around `median`: most small, a long tail of large ones (file reads, logs). */
    sized: (median, spread, max) => Math.min(max, Math.round(median * Math.exp(spread * gaussian()))),
    hex: (n) => {
      let s = "";
      while (s.length < n)
        s += Math.floor(next() * 4294967296)
          .toString(16)
          .padStart(8, "0");
      return s.slice(0, n);
    },
    uuid: () => {
      const h = random.hex(32);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
    },
    /** A UUIDv7 as Codex writes its ids: the time first. */
    uuid7: (ms) => {
      const t = Math.floor(ms).toString(16).padStart(12, "0");
      const h = random.hex(20);
      return `${t.slice(0, 8)}-${t.slice(8)}-7${h.slice(0, 3)}-${h.slice(3, 7)}-${h.slice(7, 19)}`;
    },
  };
  function gaussian() {
    return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  }
  return random;
}

const WORDS =
  "const let return function import export from await async if else for while new this value result error request response session turn model token cache file path line index count state items config options handler client server queue worker retry timeout status data json parse write read open close".split(
    " ",
  );

/** A pool of source-like text the tool results are cut from: real files are code, with quotes and backslashes to escape. */
function textPool(random, size = 3_000_000) {
  const lines = [];
  let length = 0;
  while (length < size) {
    const indent = "  ".repeat(random.int(0, 4));
    const words = Array.from({ length: random.int(2, 12) }, () => random.pick(WORDS)).join(" ");
    const line = random.chance(0.15)
      ? `${indent}// ${words}`
      : random.chance(0.2)
        ? `${indent}log("${words}\\n", { path: '${random.pick(WORDS)}/${random.pick(WORDS)}.ts' });`
        : `${indent}${words};`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n");
}

/**
 * Writes the history under `home` and returns what it wrote: files and bytes per agent, each
 * model's calls and tokens as the files say them, and the transcripts last written in the hour
 * before `now` (the ones a bench can append to as if their agent were still running).
 */
export function writeAgentHistory(home, { bytes = 1e9, variant = 1, now = Date.now() } = {}) {
  const random = randomFrom(variant);
  const pool = textPool(random);
  const text = (length) => {
    const start = random.int(0, pool.length - Math.min(length, pool.length) - 1);
    return pool.slice(start, start + length);
  };
  const summary = { home, variant, now: new Date(now).toISOString(), bytes: 0, files: 0, agents: {}, models: {}, recent: [] };
  for (const [agent] of AGENT_SHARES) summary.agents[agent] = { sessions: 0, files: 0, bytes: 0, calls: 0 };
  const tally = (agent, model, usage) => {
    const m = (summary.models[model] ??= { agent, calls: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    m.calls++;
    m.input += usage.input;
    m.output += usage.output;
    m.cacheRead += usage.cacheRead;
    m.cacheWrite += usage.cacheWrite;
    summary.agents[agent].calls++;
  };
  const projects = Array.from(
    { length: 40 },
    (_, i) => `/home/dev/${random.pick(["work", "src", "projects"])}/${random.pick(WORDS)}-${random.pick(WORDS)}-${i}`,
  );

  // When a session starts: over the last 60 days, a few in the last hour (an agent still at work).
  // Each stops before `deadline`, so no line is written in the future.
  const deadline = now - 120_000;
  const sessionStart = () => (random.chance(0.02) ? now - random.int(5, 55) * 60_000 : now - 3_600_000 - random.next() * HISTORY_DAYS * DAY_MS);
  /** Some sessions are resumed hours or days later, into the same file, when that is still before now. */
  const resumeGap = (start) => {
    const gap = random.chance(0.12) ? random.int(1, 72) * 3_600_000 : 0;
    return start + gap < deadline - 3_600_000 ? gap : 0;
  };

  const write = (agent, file, lines, lastMs) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const body = `${lines.join("\n")}\n`;
    fs.writeFileSync(file, body);
    const when = new Date(lastMs);
    fs.utimesSync(file, when, when);
    const size = Buffer.byteLength(body);
    summary.bytes += size;
    summary.files++;
    summary.agents[agent].files++;
    summary.agents[agent].bytes += size;
    if (lastMs > now - 3_600_000) summary.recent.push({ agent, file });
    return size;
  };

  const writers = { claude: claudeSession, codex: codexSession, gemini: geminiSession };
  while (summary.bytes < bytes) {
    const agent = random.weighted(AGENT_SHARES);
    // A session's own size: a median of ~150 KB, a long tail to several MB.
    const target = Math.min(bytes - summary.bytes + 2000, random.sized(150_000, 1.1, 6_000_000));
    writers[agent](target);
    summary.agents[agent].sessions++;
  }
  return summary;

  /** One Claude Code session: prompts, streamed assistant blocks, tool uses and their results, retries; some resumed later. */
  function claudeSession(target) {
    const sessionId = random.uuid();
    const cwd = random.pick(projects);
    const file = path.join(home, ".claude", "projects", cwd.replace(/[/.]/g, "-"), `${sessionId}.jsonl`);
    let model = random.weighted(MODELS.claude);
    // A few sessions run with the 1M-token context: their calls go past 200k input tokens.
    const longContext = random.chance(0.03);
    const lines = [];
    let size = 0;
    let t = sessionStart();
    const resumeGapMs = resumeGap(t);
    const runs = resumeGapMs ? 2 : 1;
    let parent = null;
    let context = 14_000;
    const iso = () => new Date(t).toISOString();
    const push = (line) => {
      const json = JSON.stringify(line);
      lines.push(json);
      size += json.length + 1;
    };
    const common = () => ({ userType: "external", entrypoint: "cli", cwd, sessionId, version: CLAUDE_VERSION, gitBranch: "main" });
    const entry = (fields) => {
      const uuid = random.uuid();
      push({ parentUuid: parent, isSidechain: false, ...fields, uuid, timestamp: iso(), ...common() });
      parent = uuid;
      return uuid;
    };
    for (let run = 0; run < runs; run++) {
      if (run === 1) {
        t += resumeGapMs;
        if (random.chance(0.3)) model = random.weighted(MODELS.claude);
      }
      const runTarget = ((run + 1) * target) / runs;
      const runStart = t;
      let costUsd = 0;
      while (size < runTarget && t < deadline) {
        const prompt = `${random.pick(["fix", "refactor", "explain", "add tests for", "speed up", "review"])} ${random.pick(WORDS)} in ${random.pick(WORDS)}.ts ${text(random.sized(120, 1, 4000))}`;
        push({ type: "queue-operation", operation: "enqueue", timestamp: iso(), sessionId, content: prompt });
        const promptId = random.uuid();
        entry({ promptId, type: "user", message: { role: "user", content: prompt }, permissionMode: "default", promptSource: "user" });
        t += 30;
        entry({
          attachment: { type: "date", date: iso().slice(0, 10) },
          type: "attachment",
          rendered: [{ content: `<system-reminder>\nToday's date is ${iso().slice(0, 10)}.\n</system-reminder>` }],
          renderedRole: "system",
        });
        const calls = random.int(1, 14);
        for (let c = 0; c < calls; c++) {
          const last = c === calls - 1 || size >= runTarget || t > deadline - 60_000;
          let requestRef = random.uuid();
          const request = (base) =>
            push({
              type: "api-request",
              sessionId,
              id: requestRef,
              timestamp: iso(),
              version: CLAUDE_VERSION,
              querySource: "repl_main_thread",
              shapeHash: random.hex(64),
              params: { model, max_tokens: 32000, thinking: { budget_tokens: 31999, type: "enabled", display: "omitted" } },
              thread: { type: "none" },
              echoWireToolInputs: false,
              ...(base && { base }),
              keep: base ? 1 : 0,
              tail: [random.hex(64)],
              requestDigest: random.hex(64),
            });
          request();
          // Overloaded now and then: Claude Code writes each failed attempt, then tries again.
          if (random.chance(0.03)) {
            const failures = random.int(1, 3);
            for (let attempt = 1; attempt <= failures; attempt++) {
              t += random.int(200, 900);
              entry({
                type: "system",
                subtype: "api_error",
                level: "error",
                error: {
                  message: '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                  status: 529,
                  requestId: `req_${random.hex(24)}`,
                  formatted: "529 Overloaded",
                  connection: null,
                  isNetworkDown: false,
                  rateLimits: null,
                  noResponse: null,
                },
                retryInMs: 500 * 2 ** attempt,
                retryAttempt: attempt,
                maxRetries: 10,
                source: "request_retry",
              });
              const base = requestRef;
              requestRef = random.uuid();
              t += 500 * 2 ** attempt;
              request(base);
            }
            // A rare one gives up: the error Claude Code printed, and the turn ends there.
            if (random.chance(0.15)) {
              t += 1000;
              entry({
                type: "assistant",
                message: {
                  diagnostics: null,
                  id: random.uuid(),
                  container: null,
                  model: "<synthetic>",
                  role: "assistant",
                  stop_details: null,
                  stop_reason: "stop_sequence",
                  stop_sequence: "",
                  type: "message",
                  usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
                  content: [{ type: "text", text: "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment." }],
                  context_management: null,
                },
                requestId: `req_${random.hex(24)}`,
                error: "server_error",
                isApiErrorMessage: true,
                apiErrorStatus: 529,
                apiErrorType: "overloaded_error",
              });
              break;
            }
          }
          t += random.int(1500, 25_000);
          const fresh = random.int(300, 9000);
          const cacheWrite = random.chance(0.85) ? fresh : 0;
          const usage = {
            input_tokens: cacheWrite ? random.int(3, 12) : fresh,
            cache_creation_input_tokens: cacheWrite,
            cache_read_input_tokens: context,
            output_tokens: random.int(40, last ? 2500 : 900),
          };
          context += fresh;
          if (context > (longContext ? 650_000 : 185_000)) context = random.int(20_000, 40_000); // compacted
          tally("claude", model, {
            input: usage.input_tokens,
            output: usage.output_tokens,
            cacheRead: usage.cache_read_input_tokens,
            cacheWrite: usage.cache_creation_input_tokens,
          });
          costUsd += (usage.input_tokens + usage.cache_creation_input_tokens + usage.output_tokens * 5) * 3e-6 + usage.cache_read_input_tokens * 3e-7;
          const messageId = `msg_${random.hex(24)}`;
          const requestId = `req_${random.hex(24)}`;
          // Streamed: each content block its own line, all with one message.id, requestId and usage.
          const blocks = [];
          if (random.chance(0.6)) blocks.push({ type: "thinking", thinking: "", signature: random.hex(random.sized(400, 0.6, 3000)) });
          if (random.chance(last ? 1 : 0.4)) blocks.push({ type: "text", text: text(random.sized(last ? 900 : 200, 0.8, 12_000)) });
          const tools = last
            ? []
            : Array.from(
                {
                  length: random.weighted([
                    [1, 0.75],
                    [2, 0.18],
                    [3, 0.07],
                  ]),
                },
                () => claudeTool(),
              );
          for (const tool of tools) blocks.push(tool.use);
          const serverUsage = {
            ...usage,
            output_tokens_details: { thinking_tokens: 0 },
            server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
            service_tier: "standard",
            cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: cacheWrite },
            inference_geo: "",
            iterations: [],
            speed: "standard",
            fallback_credit: null,
          };
          const assistantUuids = blocks.map((block, i) => {
            t += random.int(5, 400);
            return entry({
              message: {
                id: messageId,
                type: "message",
                role: "assistant",
                model,
                content: [block],
                stop_reason: i === blocks.length - 1 ? (tools.length ? "tool_use" : "end_turn") : null,
                stop_sequence: null,
                usage: serverUsage,
                stop_details: null,
              },
              apiBlockIndex: i,
              requestId,
              requestRef,
              requestedModel: model,
              promptCacheRequested: "5m",
              type: "assistant",
              perTurnEffort: null,
              madeBy: "model",
            });
          });
          for (const tool of tools) {
            t += random.int(50, 8000);
            entry({
              promptId,
              type: "user",
              message: { role: "user", content: [{ tool_use_id: tool.use.id, type: "tool_result", content: tool.result, is_error: tool.failed }] },
              toolUseResult: tool.toolUseResult,
              sandboxed: false,
              sourceToolAssistantUUID: assistantUuids.at(-1),
            });
          }
        }
        push({ type: "last-prompt", lastPrompt: prompt.slice(0, 200), leafUuid: parent, sessionId });
      }
      push({
        type: "cost-state",
        sessionId,
        totalCostUSD: Number(costUsd.toFixed(6)),
        totalAPIDuration: t - runStart,
        totalDuration: t - runStart,
        startTime: runStart,
        hasUnknownModelCost: false,
      });
    }
    write("claude", file, lines, t);
  }

  /** A Claude Code tool use and the result it carries back (a Read's file, a Bash's output, an Edit). */
  function claudeTool() {
    const id = `toolu_${random.hex(24)}`;
    const kind = random.weighted([
      ["Read", 0.45],
      ["Bash", 0.3],
      ["Edit", 0.15],
      ["Grep", 0.1],
    ]);
    const filePath = `/home/dev/src/${random.pick(WORDS)}/${random.pick(WORDS)}.ts`;
    const failed = random.chance(0.04);
    if (kind === "Read") {
      const content = text(random.sized(9000, 1.2, 400_000));
      const numbered = content
        .split("\n")
        .map((line, i) => `${String(i + 1).padStart(6)}\u2192${line}`)
        .join("\n");
      return {
        use: { type: "tool_use", id, name: "Read", input: { file_path: filePath } },
        result: numbered,
        failed,
        toolUseResult: {
          type: "text",
          file: { filePath, content, numLines: content.split("\n").length, startLine: 1, totalLines: content.split("\n").length },
        },
      };
    }
    if (kind === "Bash") {
      const stdout = text(random.sized(2500, 1.4, 300_000));
      return {
        use: { type: "tool_use", id, name: "Bash", input: { command: `npm test -- ${random.pick(WORDS)}`, description: "run the tests" } },
        result: stdout,
        failed,
        toolUseResult: { stdout, stderr: failed ? "Error: exit code 1" : "", interrupted: false, isImage: false, noOutputExpected: false },
      };
    }
    if (kind === "Edit") {
      const oldString = text(random.sized(300, 1, 8000));
      const newString = text(random.sized(350, 1, 8000));
      return {
        use: { type: "tool_use", id, name: "Edit", input: { file_path: filePath, old_string: oldString, new_string: newString } },
        result: `The file ${filePath} has been updated.`,
        failed,
        toolUseResult: {
          filePath,
          oldString,
          newString,
          originalFile: text(random.sized(6000, 1, 200_000)),
          structuredPatch: [],
          userModified: false,
          replaceAll: false,
        },
      };
    }
    const matches = text(random.sized(1500, 1.2, 100_000));
    return {
      use: { type: "tool_use", id, name: "Grep", input: { pattern: random.pick(WORDS), output_mode: "content" } },
      result: matches,
      failed,
      toolUseResult: { mode: "content", numFiles: random.int(1, 30), filenames: [], content: matches, numLines: matches.split("\n").length },
    };
  }

  /** One Codex CLI thread: its turns, each command and its output (twice: the item and the function output), the token lines; some resumed. */
  function codexSession(target) {
    const model = random.weighted(MODELS.codex);
    const cwd = random.pick(projects);
    let t = sessionStart();
    const resumeGapMs = resumeGap(t);
    const runs = resumeGapMs ? 2 : 1;
    const threadId = random.uuid7(t);
    const stamp = new Date(t).toISOString().slice(0, 19).replace(/:/g, "-");
    const [year, month, day] = new Date(t).toISOString().slice(0, 10).split("-");
    const file = path.join(home, ".codex", "sessions", year, month, day, `rollout-${stamp}-${threadId}.jsonl`);
    const lines = [];
    let size = 0;
    let ordinal = 0;
    let sequence = 0;
    const total = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, total_tokens: 0 };
    let context = 12_000;
    const iso = () => new Date(t).toISOString();
    const push = (type, payload) => {
      const json = JSON.stringify({ timestamp: iso(), ordinal: ordinal++, type, payload });
      lines.push(json);
      size += json.length + 1;
    };
    push("session_meta", {
      account_scoped: true,
      session_id: threadId,
      id: threadId,
      timestamp: iso(),
      cwd,
      runtime_workspace_roots: [cwd],
      originator: "codex_cli_rs",
      cli_version: CODEX_VERSION,
      source: "cli",
      thread_source: "user",
      model_provider: "openai",
      base_instructions: { text: text(random.sized(12_000, 0.2, 20_000)) },
      history_mode: "paginated",
      context_window: { window_id: random.uuid7(t) },
    });
    for (let run = 0; run < runs; run++) {
      if (run === 1) t += resumeGapMs;
      const runTarget = ((run + 1) * target) / runs;
      while (size < runTarget && t < deadline) {
        const turnId = random.uuid7(t);
        const startedAt = Math.floor(t / 1000);
        const turnStart = t;
        push("event_msg", {
          type: "task_started",
          turn_attribution: { turn_id: turnId, turn_trigger: "user", parent_turn_id: null, initiating_agent_path: null, root_turn_id: turnId },
          turn_id: turnId,
          root_turn_id: turnId,
          started_at: startedAt,
          model_context_window: 258400,
          collaboration_mode_kind: "default",
        });
        const passthrough = { turn_id: turnId };
        if (sequence === 0) {
          push("response_item", {
            type: "message",
            id: `msg_${random.uuid7(t)}`,
            role: "developer",
            content: [{ type: "input_text", text: text(random.sized(4000, 0.3, 10_000)) }],
            internal_chat_message_metadata_passthrough: { ...passthrough, create_time: t / 1000 },
          });
          sequence++;
        }
        push("turn_context", {
          turn_id: turnId,
          root_turn_id: turnId,
          disabled_plugin_ids: [],
          cwd,
          approval_policy: "on-request",
          approvals_reviewer: "user",
          model,
          collaboration_mode: { mode: "default", settings: { model, reasoning_effort: "medium", developer_instructions: null } },
          multi_agent_version: "v1",
          realtime_active: false,
          summary: "auto",
          sandbox_policy: { type: "workspace-write" },
        });
        const prompt = `${random.pick(["fix", "implement", "explain", "clean up"])} ${random.pick(WORDS)} ${text(random.sized(100, 1, 3000))}`;
        t += 40;
        push("response_item", {
          type: "message",
          id: `msg_${random.uuid7(t)}`,
          role: "user",
          content: [{ type: "input_text", text: prompt }],
          internal_chat_message_metadata_passthrough: { ...passthrough, create_time: t / 1000 },
        });
        sequence++;
        push("event_msg", {
          type: "item_completed",
          thread_id: threadId,
          turn_id: turnId,
          item: { type: "UserMessage", id: random.uuid7(t), content: [{ type: "text", text: prompt, text_elements: [] }] },
          started_at_ms: t,
          completed_at_ms: t,
        });
        // Codex writes nothing of a failed attempt; one that gave up ends the turn with the error it printed.
        if (random.chance(0.02)) {
          t += random.int(3000, 30_000);
          push("event_msg", {
            type: "task_complete",
            root_turn_id: turnId,
            turn_id: turnId,
            last_agent_message: null,
            error: { message: "We’re currently experiencing high demand, which may cause temporary errors.", codex_error_info: "internal_server_error" },
            started_at: startedAt,
            completed_at: Math.floor(t / 1000),
            duration_ms: t - turnStart,
          });
          continue;
        }
        const turnTotal = {
          input_tokens: 0,
          cached_input_tokens: 0,
          cache_write_input_tokens: 0,
          output_tokens: 0,
          reasoning_output_tokens: 0,
          total_tokens: 0,
        };
        const calls = random.int(1, 12);
        let answer = "";
        for (let c = 0; c < calls; c++) {
          const last = c === calls - 1 || size >= runTarget || t > deadline - 60_000;
          t += random.int(1500, 20_000);
          if (random.chance(0.7))
            push("response_item", {
              type: "reasoning",
              id: `rs_${random.hex(32)}`,
              summary: [],
              content: null,
              encrypted_content: `gAAAAA${random.hex(random.sized(1800, 0.7, 12_000))}`,
              internal_chat_message_metadata_passthrough: passthrough,
            });
          const fresh = random.int(400, 8000);
          const input = context + fresh;
          const cached = context > 20_000 && random.chance(0.9) ? context : 0;
          const output = random.int(30, last ? 2000 : 700);
          const reasoning = Math.floor(output * random.next() * 0.6);
          context = input > 240_000 ? random.int(15_000, 30_000) : input;
          const usage = {
            input_tokens: input,
            cached_input_tokens: cached,
            cache_write_input_tokens: 0,
            output_tokens: output,
            reasoning_output_tokens: reasoning,
            total_tokens: input + output,
          };
          for (const key of Object.keys(total)) {
            total[key] += usage[key];
            turnTotal[key] += usage[key];
          }
          tally("codex", model, { input: input - cached, output, cacheRead: cached, cacheWrite: 0 });
          const responseId = `resp_${random.hex(32)}`;
          if (last) {
            answer = text(random.sized(700, 0.8, 8000));
            const messageId = `msg_${random.hex(32)}`;
            push("event_msg", {
              type: "item_completed",
              thread_id: threadId,
              turn_id: turnId,
              item: { type: "AgentMessage", id: messageId, content: [{ type: "Text", text: answer }] },
              started_at_ms: t - 200,
              completed_at_ms: t,
            });
            push("response_item", {
              type: "message",
              status: "completed",
              id: messageId,
              role: "assistant",
              content: [{ type: "output_text", text: answer, annotations: [] }],
              internal_chat_message_metadata_passthrough: { ...passthrough, content_item_kinds: ["unknown"] },
            });
            sequence++;
          } else {
            const callId = `call_${random.hex(24)}`;
            const command = `${random.pick(["rg", "cat", "sed -n 1,200p", "npm test", "ls -la"])} ${random.pick(WORDS)}/${random.pick(WORDS)}.ts`;
            push("response_item", {
              type: "function_call",
              status: "completed",
              id: `fc_${random.hex(32)}`,
              name: "exec_command",
              arguments: JSON.stringify({ cmd: command }),
              call_id: callId,
              internal_chat_message_metadata_passthrough: passthrough,
            });
            sequence++;
          }
          push("token_usage_record", {
            thread_id: threadId,
            turn_id: turnId,
            session_id: threadId,
            root_turn_id: turnId,
            response_id: responseId,
            usage,
            turn_token_usage: { ...turnTotal },
            thread_token_usage: { ...total },
          });
          if (!last) {
            const callId = JSON.parse(lines.at(-2)).payload.call_id;
            t += random.int(100, 10_000);
            const exitCode = random.chance(0.08) ? 1 : 0;
            const output = text(random.sized(3500, 1.3, 300_000));
            push("event_msg", {
              type: "item_completed",
              thread_id: threadId,
              turn_id: turnId,
              item: {
                type: "CommandExecution",
                id: callId,
                process_id: String(random.int(1000, 60000)),
                command: ["/bin/bash", "-lc", "run"],
                cwd: `file://${cwd}`,
                parsed_cmd: [{ type: "unknown", cmd: "run" }],
                source: "unified_exec_startup",
                status: "completed",
                aggregated_output: output,
                exit_code: exitCode,
                duration: { secs: 0, nanos: random.int(1000, 900_000_000) },
              },
              started_at_ms: t - 100,
              completed_at_ms: t,
            });
            push("response_item", {
              type: "function_call_output",
              id: `fco_${random.uuid7(t)}`,
              call_id: callId,
              output: `Chunk ID: ${random.int(100000, 999999)}\nWall time: 0.1000 seconds\nProcess exited with code ${exitCode}\nOriginal token count: ${Math.ceil(output.length / 4)}\nOutput:\n${output}`,
              internal_chat_message_metadata_passthrough: { ...passthrough, create_time: t / 1000 },
            });
            sequence++;
          }
          push("event_msg", {
            type: "token_count",
            info: { total_token_usage: { ...total }, last_token_usage: usage, last_usage_includes_reasoning: false, model_context_window: 258400 },
            rate_limits: {
              limit_id: "codex",
              limit_name: null,
              primary: null,
              secondary: null,
              credits: null,
              individual_limit: null,
              spend_control_reached: null,
              plan_type: null,
              rate_limit_reached_type: null,
            },
          });
          if (last) break;
        }
        t += 20;
        push("event_msg", {
          type: "task_complete",
          root_turn_id: turnId,
          turn_id: turnId,
          last_agent_message: answer,
          started_at: startedAt,
          completed_at: Math.floor(t / 1000),
          duration_ms: t - turnStart,
          time_to_first_token_ms: random.int(300, 3000),
        });
      }
    }
    write("codex", file, lines, t);
  }

  /** One Gemini CLI session: its header, each model message (written again with its tool calls' results), the results sent back; some resumed. */
  function geminiSession(target) {
    const model = random.weighted(MODELS.gemini);
    const cwd = random.pick(projects);
    const slug = path.basename(cwd).toLowerCase();
    let t = sessionStart();
    const resumeGapMs = resumeGap(t);
    const runs = resumeGapMs ? 2 : 1;
    const sessionId = random.uuid();
    const projectHash = random.hex(64);
    const folder = path.join(home, ".gemini", "tmp", slug);
    const file = path.join(folder, "chats", `session-${new Date(t).toISOString().slice(0, 16).replace(/:/g, "-")}-${sessionId.slice(0, 8)}.jsonl`);
    const lines = [];
    let size = 0;
    let context = 9000;
    const iso = () => new Date(t).toISOString();
    const push = (line) => {
      const json = JSON.stringify(line);
      lines.push(json);
      size += json.length + 1;
    };
    const touched = () => push({ $set: { lastUpdated: iso() } });
    for (let run = 0; run < runs; run++) {
      if (run === 1) t += resumeGapMs;
      const runTarget = ((run + 1) * target) / runs;
      push({ sessionId, projectHash, startTime: iso(), lastUpdated: iso(), kind: "main" });
      const sessionContext = {
        id: random.hex(32),
        timestamp: iso(),
        type: "user",
        content: [
          {
            text: `<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nMy operating system is: linux\n- **Workspace Directories:**\n  - ${cwd}\n- **Directory Structure:**\n\n${text(random.sized(3000, 0.5, 12_000))}\n</session_context>`,
          },
        ],
      };
      push({ $set: { messages: [sessionContext], lastUpdated: iso() } });
      if (run === 1) push({ $set: { sessionId } });
      while (size < runTarget && t < deadline) {
        t += 1000;
        push({
          id: random.uuid(),
          timestamp: iso(),
          type: "user",
          content: [{ text: `${random.pick(["read", "fix", "summarise", "test"])} ${random.pick(WORDS)} ${text(random.sized(100, 1, 3000))}` }],
        });
        touched();
        const calls = random.int(1, 10);
        for (let c = 0; c < calls; c++) {
          const last = c === calls - 1 || size >= runTarget || t > deadline - 60_000;
          t += random.int(1500, 20_000);
          const fresh = random.int(300, 7000);
          const input = context + fresh;
          const cached = context > 15_000 && random.chance(0.6) ? Math.floor(context * 0.9) : 0;
          const output = random.int(20, last ? 1800 : 500);
          const thoughts = random.chance(0.7) ? random.int(50, 1500) : 0;
          context = input > 900_000 ? random.int(15_000, 30_000) : input;
          const tokens = { input, output, cached, thoughts, tool: 0, total: input + output + thoughts };
          tally("gemini", model, { input: input - cached, output, cacheRead: cached, cacheWrite: 0 });
          const id = random.uuid();
          const thoughtList = thoughts ? [{ subject: "Planning", description: text(random.sized(300, 0.6, 2000)), timestamp: iso() }] : [];
          if (last) {
            push({ id, timestamp: iso(), type: "gemini", content: text(random.sized(800, 0.8, 10_000)), thoughts: thoughtList, tokens, model });
            touched();
            break;
          }
          push({ id, timestamp: iso(), type: "gemini", content: "", thoughts: thoughtList, tokens, model });
          touched();
          const results = Array.from(
            {
              length: random.weighted([
                [1, 0.7],
                [2, 0.3],
              ]),
            },
            () => {
              const callId = `read_file__read_file_${t}_${random.int(0, 9)}`;
              const filePath = `${random.pick(WORDS)}/${random.pick(WORDS)}.ts`;
              const output = text(random.sized(6000, 1.2, 300_000));
              return { callId, filePath, response: { functionResponse: { id: callId, name: "read_file", response: { output } } } };
            },
          );
          t += random.int(50, 3000);
          push({
            id,
            timestamp: iso(),
            type: "gemini",
            content: "",
            thoughts: thoughtList,
            tokens,
            model,
            toolCalls: results.map((r) => ({
              id: r.callId,
              name: "read_file",
              args: { file_path: r.filePath },
              result: [r.response],
              status: "success",
              timestamp: iso(),
              resultDisplay: "",
              description: r.filePath,
              displayName: "ReadFile",
              renderOutputAsMarkdown: true,
            })),
          });
          push({ id: random.uuid(), timestamp: iso(), type: "user", content: results.map((r) => r.response) });
          touched();
        }
      }
    }
    if (!fs.existsSync(path.join(folder, ".project_root"))) {
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, ".project_root"), cwd);
    }
    write("gemini", file, lines, t);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [home, ...rest] = process.argv.slice(2);
  const option = (name, fallback) => {
    const at = rest.indexOf(`--${name}`);
    return at === -1 ? fallback : rest[at + 1];
  };
  const bytes = Number(option("bytes", "1e9"));
  const variant = Number(option("variant", "1"));
  const now = option("now") === undefined ? Date.now() : Date.parse(option("now"));
  if (!home || !(bytes > 0) || !Number.isInteger(variant) || Number.isNaN(now)) {
    console.error("usage: node bench/agentHistory.mjs <home> [--bytes 1e9] [--variant n] [--now <ISO time>]");
    process.exit(2);
  }
  const started = performance.now();
  const summary = writeAgentHistory(path.resolve(home), { bytes, variant, now });
  const { recent, ...rest_ } = summary;
  console.log(JSON.stringify({ ...rest_, recent: recent.length, seconds: Number(((performance.now() - started) / 1000).toFixed(1)) }, null, 2));
}
