import fs from "node:fs";
import path from "node:path";
import type { Facts, LifecycleChange, PartFields, Step } from "../mapping/changes";
import { join, ms, said } from "../dialects/stepText";
import { CODEX_SERVICE } from "../dialects/codexCli";
import type { AgentFiles, AgentRun } from "./agentFiles";
import { clip, num, obj, PROMPT_KEPT, RESULT_KEPT, str, TEXT_KEPT, type Json } from "./lineFields";

/**
 * Codex CLI's own session files (what 0.171.0 writes, tests/fixtures/codex-sessions):
 * `sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl` under its folder (~/.codex, or CODEX_HOME),
 * one JSON object a line (`{timestamp, type, payload}`), as lifecycles of the same session as its
 * telemetry (../dialects/codexCli.ts): the session is the thread (its conversation id, which a
 * `codex exec resume` continues in a file of its own), a turn is `turn:<turn_id>`. The lines that
 * tell of a turn: `session_meta` (the thread), `turn_context` (the turn's model), `event_msg`
 * `task_started` / `task_complete` (its start and end), `item_completed` (the prompt, a command run
 * with its exit code and output), `response_item` `function_call` / `function_call_output` (a tool
 * asked for and its result), `token_usage_record` (one a model call: its response id and tokens),
 * `event_msg` `error` and `turn_aborted`. Failed attempts it retried are not written.
 */

/** What the file's earlier lines left: its thread, the turn under way (null once it completed), its model, the call and tools under way. */
interface CodexFileState {
  session: string | null;
  turn: string | null;
  model: string | null;
  /** When the call under way was sent: the turn's start, or the last tool output it carries back. */
  callSentAt: number | null;
  tools: Record<string, { at: number; name: string }>;
  /** The time of the last line read: a run killed before anyone saw its process ended about then. */
  lastAt?: number;
}

const SERVICE = CODEX_SERVICE;
const OPEN_TOOLS_KEPT = 50;

/** A rollout file's thread id, from its name (`rollout-2026-11-28T21-59-18-<uuid>.jsonl`). */
export const ROLLOUT = /(?:^|\/)rollout-[0-9T:-]+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/** Named by a run whose pid is not known (no process holds the file): its stuck reason says so. */
const NO_HOLDER = "Codex CLI (no task_complete, and no Codex process holds its file)";

export const codexFiles: AgentFiles<CodexFileState> = {
  name: "codex",
  isTranscript: (relative) => relative.startsWith("sessions/") && ROLLOUT.test(relative),
  watched: [{ folder: "sessions", depth: 3 }],
  emptyState: () => ({ session: null, turn: null, model: null, callSentAt: null, tools: {} }),
  sessionOf: (state) => state.session,
  mapLine,
  runs,
  openTurn: (state) => state.turn !== null,
  // One step a turn, however often it is found ended (a restarted dashboard finds it again): the first kept says by whom.
  endedMidTurn(run, state, endedAt) {
    if (!state.turn || state.session !== run.session) return null;
    // No process was ever seen holding its file: the run ended before reqwatch looked.
    const pid = run.pid !== null && run.pid > 0 ? run.pid : null;
    const by = pid !== null ? `Codex CLI (pid ${pid})` : NO_HOLDER;
    return {
      kind: "turn",
      keys: [`turn:${state.turn}`],
      service: SERVICE,
      session: run.session,
      step: {
        key: `ended:${run.session}:${state.turn}`,
        at: pid !== null ? endedAt : (state.lastAt ?? endedAt),
        name: "process ended",
        summary: pid !== null ? `${by} ended mid-turn` : "no task_complete, and no Codex process holds its file",
        detail: said({ pid: pid ?? undefined }),
      },
      facts: { abandonedBy: by },
    };
  },
};

function mapLine(line: unknown, before: CodexFileState): { changes: LifecycleChange[]; state: CodexFileState } {
  const o = obj(line);
  const payload = obj(o?.payload);
  if (!o || !payload) return { changes: [], state: before };
  const state: CodexFileState = { ...before };
  const at = Date.parse(String(o.timestamp ?? ""));
  if (!Number.isFinite(at)) return { changes: [], state };
  state.lastAt = at;
  // A file followed from its end (last written before the retention) and resumed since has no session_meta ahead: its lines name the thread.
  state.session ??= str(payload.thread_id) ?? str(payload.session_id) ?? null;
  const changes: LifecycleChange[] = [];
  // Its ordinal where Codex writes one; else its time and what it tells of (an item's, a response's id), so two lines of one millisecond stay two.
  const ordinal = num(o.ordinal);
  const key = `line:${state.session ?? "?"}:${ordinal ?? `${at}:${str(obj(payload.item)?.id) ?? str(payload.response_id) ?? str(payload.id) ?? ""}`}:${String(payload.type ?? o.type)}`;
  const change = (step: Step, facts: Facts): LifecycleChange => {
    const made: LifecycleChange = {
      kind: "turn",
      keys: [`turn:${state.turn}`],
      service: SERVICE,
      ...(state.session && { session: state.session }),
      step,
      facts,
    };
    changes.push(made);
    return made;
  };
  const read: LineRead = { payload, type: str(payload.type), at, key, state, change };
  switch (o.type) {
    case "session_meta":
      state.session = str(payload.id) ?? str(payload.session_id) ?? state.session;
      break;
    case "turn_context":
      state.model = str(payload.model) ?? state.model;
      break;
    case "event_msg":
      eventLine(read);
      break;
    case "response_item":
      if (state.turn) responseItem(read);
      break;
    case "token_usage_record":
      if (state.turn) modelCall(read);
      break;
  }
  return { changes, state };
}

/** One line as its mapping reads it: its payload and the payload's type, its time and key, the file's state (changed in place), and where its changes go. */
interface LineRead {
  payload: Json;
  type: string | undefined;
  at: number;
  key: string;
  state: CodexFileState;
  change: (step: Step, facts: Facts) => LifecycleChange;
}

/** An `event_msg` line: a turn's start and end, its prompt, a command run, an error, an abort. */
function eventLine(read: LineRead): void {
  const { payload, type, at, key, state, change } = read;
  if (type === "task_started") {
    const turn = str(payload.turn_id);
    if (!turn) return;
    Object.assign(state, { turn, callSentAt: at, tools: {} });
    change(
      { key, at, name: "task started", summary: "a turn began", detail: said({ turn_id: turn }) },
      { startedAt: at, processingAt: at, waitingOn: "the model" },
    );
    return;
  }
  if (!state.turn) return;
  if (type === "item_completed") {
    const item = obj(payload.item);
    if (item?.type === "UserMessage") {
      const text = (Array.isArray(item.content) ? item.content : []).map((part) => str(obj(part)?.text) ?? "").join("\n");
      const prompt = change(
        { key, at, name: "prompt", summary: `a prompt of ${text.length} characters`, detail: {} },
        { prompt: clip(text, PROMPT_KEPT), ...(state.model && { model: state.model }) },
      );
      // The turn its telemetry tells of too, should its turn's span (which names it) never come.
      if (state.session) prompt.promptSent = { by: "files", session: state.session, at };
    } else if (item?.type === "CommandExecution") commandRun(read, item);
    return;
  }
  if (type === "error") {
    const message = clip(str(payload.message) ?? "Codex failed", TEXT_KEPT);
    change({ key, at, name: "error", summary: clip(message, RESULT_KEPT), detail: said({ message }) }, { error: message, exhausted: true, waitingOn: "" });
    return;
  }
  if (type === "turn_aborted") {
    const reason = str(payload.reason) ?? "aborted";
    change(
      { key, at, name: "turn aborted", summary: reason, detail: said({ reason }) },
      { endedAt: at, failed: true, error: `aborted: ${reason}`, waitingOn: "" },
    );
    state.turn = null;
    return;
  }
  if (type === "task_complete") taskComplete(read);
}

/** A command Codex ran: the result of the tool use that asked for it. */
function commandRun({ at, key, state, change }: LineRead, item: Json): void {
  const id = str(item.id);
  if (!id) return;
  const asked = state.tools[id];
  const tools = { ...state.tools };
  delete tools[id];
  state.tools = tools;
  const command = Array.isArray(item.command) ? String(item.command[item.command.length - 1] ?? "") : str(item.command);
  const exit = num(item.exit_code);
  // What the turn waited on the tool: from the model's asking to the command's end (Codex's own `duration` times the process alone, kept in the detail).
  const duration = obj(item.duration);
  const commandMs = duration ? Math.round((num(duration.secs) ?? 0) * 1000 + (num(duration.nanos) ?? 0) / 1e6) : undefined;
  const durationMs = asked ? Math.max(0, at - asked.at) : commandMs;
  const failed = item.status !== "completed" || (exit !== undefined && exit !== 0);
  const output = clip(String(item.aggregated_output ?? "").trim(), RESULT_KEPT);
  const error = failed ? `exit ${exit ?? "?"}${output ? `: ${output}` : ""}` : undefined;
  const fields: PartFields = {
    name: asked?.name ?? "command",
    ...(durationMs !== undefined && { durationMs }),
    success: !failed,
    ...(error && { error }),
  };
  change(
    {
      key: `${key}:${id}`,
      at,
      ...(asked && { startAt: asked.at }),
      name: "tool result",
      summary: join(
        asked?.name,
        command && `$ ${clip(command, RESULT_KEPT)}`,
        failed ? `failed, exit ${exit ?? "?"}` : "ok",
        ms(durationMs),
        output && `output ${output}`,
      ),
      detail: said({ call_id: id, command, exit_code: exit, duration_ms: durationMs, command_duration_ms: commandMs, output: output || undefined }),
    },
    { part: { kind: "tool", id, at, fields }, waitingOn: Object.keys(tools).length > 0 ? `tool ${Object.values(tools)[0]!.name}` : "the model" },
  );
}

/** The turn's end: its answer, how long it took, and the error of a turn Codex gave up on. */
function taskComplete({ payload, at, key, state, change }: LineRead): void {
  const output = str(payload.last_agent_message);
  const durationMs = num(payload.duration_ms);
  // A turn Codex gave up on (its retries of the API exhausted) completes with the error it printed.
  const failure = obj(payload.error);
  const error = failure ? `${str(failure.message) ?? "Codex failed"}${str(failure.codex_error_info) ? ` (${str(failure.codex_error_info)})` : ""}` : undefined;
  change(
    {
      key,
      at,
      ...(durationMs !== undefined && { startAt: at - durationMs }),
      name: "task complete",
      summary: join(
        durationMs !== undefined && `took ${ms(durationMs)}`,
        output && `an answer of ${output.length} characters`,
        error && `failed: ${clip(error, RESULT_KEPT)}`,
      ),
      detail: said({ turn_id: state.turn, duration_ms: durationMs, time_to_first_token_ms: num(payload.time_to_first_token_ms), error }),
    },
    { endedAt: at, ...(output !== undefined && { output: clip(output, TEXT_KEPT) }), ...(error && { failed: true, error }), waitingOn: "" },
  );
  Object.assign(state, { turn: null, callSentAt: null, tools: {} });
}

/** A `response_item` line: a tool asked for, a tool's output, the model's answer. */
function responseItem(read: LineRead): void {
  const { payload, type, at, key, change } = read;
  if (type === "function_call" || type === "custom_tool_call") toolAsked(read);
  else if (type === "function_call_output" || type === "custom_tool_call_output") toolOutput(read);
  else if (type === "message" && payload.role === "assistant") {
    const text = (Array.isArray(payload.content) ? payload.content : []).map((part) => str(obj(part)?.text) ?? "").join("\n");
    if (text) change({ key, at, name: "answer", summary: `an answer of ${text.length} characters`, detail: {} }, { output: clip(text, TEXT_KEPT) });
  }
}

/** A tool asked for: open until its output comes. */
function toolAsked({ payload, at, key, state, change }: LineRead): void {
  const id = str(payload.call_id);
  if (!id) return;
  const name = str(payload.name) ?? "?";
  const input = argumentsSummary(payload.arguments ?? payload.input);
  const open = Object.entries({ ...state.tools, [id]: { at, name } });
  state.tools = Object.fromEntries(open.slice(Math.max(0, open.length - OPEN_TOOLS_KEPT)));
  change(
    { key: `${key}:${id}`, at, name: `tool ${name}`, summary: join("asked for", input), detail: said({ call_id: id, tool_name: name, input }) },
    { part: { kind: "tool", id, at, fields: { name } }, waitingOn: `tool ${name}` },
  );
}

/** A tool's output: the use it answers is closed. */
function toolOutput({ payload, at, key, state, change }: LineRead): void {
  const id = str(payload.call_id);
  // The next model call carries it back: it is sent from here.
  state.callSentAt = at;
  const asked = id ? state.tools[id] : undefined;
  if (!id || !asked) return;
  const tools = { ...state.tools };
  delete tools[id];
  state.tools = tools;
  const output = clip(typeof payload.output === "string" ? payload.output.trim() : JSON.stringify(payload.output ?? ""), RESULT_KEPT);
  const durationMs = Math.max(0, at - asked.at);
  change(
    {
      key: `${key}:${id}`,
      at,
      startAt: asked.at,
      name: "tool result",
      summary: join(asked.name, "done", ms(durationMs)),
      detail: said({ call_id: id, output: output || undefined, duration_ms: durationMs }),
    },
    { part: { kind: "tool", id, at, fields: { name: asked.name, durationMs, success: true } }, waitingOn: "the model" },
  );
}

/** A `token_usage_record` line: one model call, its response id and tokens. */
function modelCall({ payload, at, key, state, change }: LineRead): void {
  const usage = obj(payload.usage);
  const id = str(payload.response_id) ?? `${key}:call`;
  const input = num(usage?.input_tokens) ?? 0;
  const cached = num(usage?.cached_input_tokens) ?? 0;
  const sentAt = state.callSentAt;
  // OpenAI counts the cached tokens in its input; kept apart, as Claude Code's and Codex's telemetry are.
  const fields: PartFields = {
    ...(state.model && { model: state.model }),
    inputTokens: Math.max(0, input - cached),
    outputTokens: num(usage?.output_tokens) ?? 0,
    cacheReadTokens: cached,
    ...((num(usage?.cache_write_input_tokens) ?? 0) > 0 && { cacheWriteTokens: num(usage?.cache_write_input_tokens) }),
    ...(num(usage?.reasoning_output_tokens) !== undefined && { reasoningTokens: num(usage?.reasoning_output_tokens) }),
    ...(sentAt !== null && { durationMs: Math.max(0, at - sentAt) }),
    success: true,
    // Its telemetry names the call by a span, which carries no response id: paired in order (mapping/fold.ts `joinedParts`).
    toldBy: "files",
  };
  state.callSentAt = null;
  change(
    {
      key,
      at,
      ...(sentAt !== null && { startAt: sentAt }),
      name: "model call",
      summary: join(
        fields.model,
        `${fields.inputTokens} in / ${fields.outputTokens} out`,
        cached > 0 && `${cached} cached`,
        fields.reasoningTokens !== undefined && `${fields.reasoningTokens} reasoning`,
        ms(fields.durationMs),
      ),
      detail: said({
        response_id: id,
        model: fields.model,
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: fields.outputTokens,
        reasoning_output_tokens: fields.reasoningTokens,
        duration_ms: fields.durationMs,
      }),
    },
    {
      succeeded: true,
      ...(fields.model && { model: fields.model }),
      part: { kind: "call", id, at, fields },
      waitingOn: Object.keys(state.tools).length > 0 ? `tool ${Object.values(state.tools)[0]!.name}` : "the model",
    },
  );
}

/** A tool call's arguments in a line: its command (`cmd`, `command`), else its JSON's start. */
function argumentsSummary(args: unknown): string | undefined {
  let parsed: unknown = args;
  if (typeof args === "string") {
    try {
      parsed = JSON.parse(args);
    } catch {
      return clip(args, RESULT_KEPT) || undefined;
    }
  }
  const o = obj(parsed);
  const command = o?.cmd ?? o?.command;
  if (typeof command === "string") return clip(`$ ${command}`, RESULT_KEPT);
  if (Array.isArray(command)) return clip(`$ ${command.map(String).join(" ")}`, RESULT_KEPT);
  return o ? clip(JSON.stringify(o), RESULT_KEPT) : undefined;
}

/**
 * Codex's runs: it names its processes nowhere, but a running Codex holds its rollout file open, so
 * the processes holding one (their /proc/<pid>/fd) are its live runs. A Codex process whose open
 * files cannot be read (another user's, as a user who is not root) is a run of unknown thread
 * (`session` ""): while one is there, a file no process is seen holding cannot be said abandoned.
 */
function runs(folder: string): AgentRun[] {
  const sessions = path.join(folder, "sessions") + path.sep;
  let pids: string[];
  try {
    pids = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const found: AgentRun[] = [];
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      if (isCodex(pid)) found.push({ pid: Number(pid), session: "", busy: true, liveness: "unknown", lastSeenAt: 0 });
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const thread = target.startsWith(sessions) ? ROLLOUT.exec(target)?.[1] : undefined;
      if (thread) found.push({ pid: Number(pid), session: thread, busy: true, liveness: "alive", lastSeenAt: Date.now() });
    }
  }
  return found;
}

function isCodex(pid: string): boolean {
  try {
    return /codex/i.test(fs.readFileSync(`/proc/${pid}/comm`, "utf8"));
  } catch {
    return false;
  }
}
