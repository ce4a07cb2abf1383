import fs from "node:fs";
import path from "node:path";
import { readSmallJson } from "../../fs/readSmallJson";
import { pidExists, processStartTicks } from "../../process/liveness";
import type { Facts, LifecycleChange, PartFields, Step } from "../mapping/changes";
import { join, ms, said } from "../dialects/stepText";
import { CLAUDE_CODE_SERVICE, subagentKey } from "../dialects/claudeCode";
import type { AgentFiles, AgentRun } from "./agentFiles";
import { clip, num, obj, PROMPT_KEPT, RESULT_KEPT, str, TEXT_KEPT, type Json } from "./lineFields";

/**
 * Claude Code's own session files (what 2.1.332 writes, tests/fixtures/claude-code-transcripts):
 * `projects/<cwd, / as ->/<session id>.jsonl` under its folder (~/.claude, or CLAUDE_CONFIG_DIR),
 * one JSON object a line, as lifecycles of the same shape and keys as its telemetry
 * (../dialects/claudeCode.ts): a turn is `prompt:<promptId>` in its session, a model call is its
 * request id, a tool use its `tool_use_id`, so a session seen in both is one session, each call
 * once. The lines that tell of a turn: `user` (a prompt, or tool results, with its promptId),
 * `api-request` (a call sent), `assistant` (an answer, with its model, usage and tool uses; with
 * `isApiErrorMessage`, the error Claude Code gave up with), `system` `api_error` (a failed attempt,
 * retried), `system` `local_command` (a slash command's output). Only `user` lines carry the prompt id: the others belong to the file's latest prompt.
 * Everything else (attachments, the request's shape, queue operations, costs) tells of no turn.
 * A subagent writes a file of its own (`<session>/subagents/agent-<id>.jsonl`, its lines marked
 * `isSidechain` with its `agentId`): its run is an `agent` lifecycle of the session
 * (`subagent:<agentId>`), so its calls count in the session without reopening the turn that
 * launched it (it runs in the background, and ends after that turn's answer).
 */

/** What the file's earlier lines left: the turn it is in and the call under way. */
interface ClaudeFileState {
  session: string | null;
  prompt: string | null;
  /** A subagent's file (`<session>/subagents/agent-<id>.jsonl`): its agent's id; its run is a lifecycle of its own. */
  agent?: string | null;
  /** When the call under way was first sent (its first attempt), and the attempt now under way after failed ones. */
  callSentAt: number | null;
  attempt: number;
  /** Tool uses not yet answered: when each was asked for, and its name. */
  tools: Record<string, { at: number; name: string }>;
}

const SERVICE = CLAUDE_CODE_SERVICE;
/** Tools asked for and never answered (a killed run) are forgotten past this many, so a state stays small. */
const OPEN_TOOLS_KEPT = 50;

const blocks = (content: unknown): Json[] => (Array.isArray(content) ? content.map(obj).filter((block): block is Json => block !== undefined) : []);

/** A block's or a message's text: a string, or its text blocks joined. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return blocks(content)
    .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
    .filter(Boolean)
    .join("\n");
}

/** What Claude Code writes in place of a prompt when the user stopped the turn. */
const INTERRUPTED = /^\[Request interrupted by user( for tool use)?\]$/;

export const claudeCodeFiles: AgentFiles<ClaudeFileState> = {
  name: "claude-code",
  // projects/<project>/<session>.jsonl, and a session's subagents' files below it.
  isTranscript: (relative) => relative.startsWith("projects/") && relative.endsWith(".jsonl"),
  watched: [
    { folder: "projects", depth: 4 },
    { folder: "sessions", depth: 0 },
  ],
  emptyState: () => ({ session: null, prompt: null, callSentAt: null, attempt: 1, tools: {} }),
  sessionOf: (state) => state.session,
  mapLine,
  runs,
  endedMidTurn(run, state, endedAt) {
    if (!state.prompt || state.session !== run.session) return null;
    const by = `Claude Code (pid ${run.pid})`;
    return {
      kind: "turn",
      keys: [`prompt:${state.prompt}`],
      service: SERVICE,
      session: run.session,
      step: { key: `ended:${run.session}:${run.pid}`, at: endedAt, name: "process ended", summary: `${by} ended mid-turn`, detail: { pid: run.pid } },
      facts: { abandonedBy: by },
    };
  },
};

function mapLine(line: unknown, before: ClaudeFileState): { changes: LifecycleChange[]; state: ClaudeFileState } {
  const o = obj(line);
  if (!o) return { changes: [], state: before };
  const state: ClaudeFileState = { ...before, session: str(o.sessionId) ?? before.session };
  const at = Date.parse(String(o.timestamp ?? ""));
  if (!Number.isFinite(at)) return { changes: [], state };
  const changes: LifecycleChange[] = [];
  const change = (step: Step, facts: Facts) =>
    changes.push({
      kind: state.agent ? "agent" : "turn",
      keys: [state.agent ? subagentKey(state.agent) : `prompt:${state.prompt}`],
      service: SERVICE,
      ...(state.session && { session: state.session }),
      step,
      facts,
    });
  const read: LineRead = { o, at, key: str(o.uuid) ?? `${String(o.type)}:${at}`, state, change };
  switch (o.type) {
    case "user":
      userLine(read);
      break;
    case "api-request":
      // A call sent: its first attempt's time is the call's start (a retry sends it again).
      if (state.prompt && state.callSentAt === null) state.callSentAt = at;
      break;
    case "system":
      systemLine(read);
      break;
    case "assistant":
      if (state.prompt) assistantLine(read);
      break;
  }
  return { changes, state };
}

/** One line as its mapping reads it: the line, its time and key, the file's state (changed in place), and where its changes go. */
interface LineRead {
  o: Json;
  at: number;
  key: string;
  state: ClaudeFileState;
  change: (step: Step, facts: Facts) => void;
}

/** A `user` line: a prompt (the user's, or a subagent's task), an interruption, or tool results. */
function userLine(read: LineRead): void {
  const { o, at, key, state, change } = read;
  const message = obj(o.message);
  const results = blocks(message?.content).filter((block) => block.type === "tool_result");
  const promptId = str(o.promptId);
  if (results.length > 0) {
    if (state.prompt) toolResults(read, results);
    return;
  }
  const text = textOf(message?.content);
  const agent = str(o.agentId);
  // A meta line, or a sidechain's prompt that names no agent, is no turn of its own.
  if ((o.isSidechain === true && !agent) || o.isMeta === true || !promptId) return;
  if (agent) {
    // A subagent's task: its run begins.
    if (agent === state.agent) return;
    Object.assign(state, { agent, prompt: promptId, callSentAt: null, attempt: 1, tools: {} });
    change(
      {
        key: `line:${key}`,
        at,
        name: "subagent task",
        summary: `a task of ${text.length} characters`,
        detail: said({ agent_id: agent, prompt_id: promptId, uuid: str(o.uuid) }),
      },
      { startedAt: at, processingAt: at, prompt: clip(text, PROMPT_KEPT), waitingOn: "the model" },
    );
    return;
  }
  if (INTERRUPTED.test(text.trim())) {
    if (!state.prompt) return;
    change(
      { key: `line:${key}`, at, name: "interrupted", summary: "the user stopped the turn", detail: {} },
      { endedAt: at, failed: true, error: "interrupted by the user", waitingOn: "" },
    );
    return;
  }
  if (promptId === state.prompt) return;
  Object.assign(state, { prompt: promptId, callSentAt: null, attempt: 1, tools: {} });
  // A slash command: Claude Code may run it itself (its output follows) or send it to the model; it waits on neither said.
  const command = text.startsWith("<command-name>");
  change(
    {
      key: `line:${key}`,
      at,
      name: command ? "command" : "prompt",
      summary: command ? (text.match(/<command-name>([^<]*)<\/command-name>/)?.[1] ?? "a command") : `a prompt of ${text.length} characters`,
      detail: said({ prompt_id: promptId, uuid: str(o.uuid) }),
    },
    { startedAt: at, processingAt: at, prompt: clip(text, PROMPT_KEPT), waitingOn: command ? "" : "the model" },
  );
}

/** The results of tool uses, each answering the use it names. */
function toolResults({ at, key, state, change }: LineRead, results: Json[]): void {
  const tools = { ...state.tools };
  for (const result of results) {
    const id = str(result.tool_use_id);
    if (!id) continue;
    const asked = tools[id];
    delete tools[id];
    const failed = result.is_error === true;
    const text = clip(textOf(result.content).trim(), RESULT_KEPT);
    const durationMs = asked ? Math.max(0, at - asked.at) : undefined;
    const fields: PartFields = {
      ...(asked && { name: asked.name }),
      ...(durationMs !== undefined && { durationMs }),
      success: !failed,
      ...(failed && { error: text || "failed" }),
    };
    const step: Step = {
      key: `line:${key}:${id}`,
      at,
      ...(asked && { startAt: asked.at }),
      name: "tool result",
      summary: join(asked?.name, failed ? `failed${text ? `: ${text}` : ""}` : "ok", ms(durationMs)),
      detail: said({ tool_use_id: id, tool_name: asked?.name, success: !failed, duration_ms: durationMs, result: text || undefined }),
    };
    change(step, {
      part: { kind: "tool", id, at, fields },
      waitingOn: Object.keys(tools).length > 0 ? `tool ${Object.values(tools)[0]!.name}` : "the model",
    });
  }
  state.tools = tools;
}

/** A `system` line: a slash command's output, or a failed attempt of the call under way. */
function systemLine({ o, at, key, state, change }: LineRead): void {
  if (o.subtype === "local_command" && state.prompt && !state.agent) {
    // A slash command Claude Code ran itself (/cost, /usage): its output is the turn's answer; no model was asked.
    const output = clip(
      String(o.content ?? "")
        .replace(/^<local-command-stdout>|<\/local-command-stdout>$/g, "")
        .trim(),
      TEXT_KEPT,
    );
    change(
      { key: `line:${key}`, at, name: "local command", summary: `an output of ${output.length} characters`, detail: {} },
      { answeredAt: at, output, waitingOn: "" },
    );
    return;
  }
  if (o.subtype !== "api_error" || !state.prompt) return;
  const error = obj(o.error);
  const status = num(error?.status);
  const text = str(error?.formatted) ?? str(error?.message) ?? (status !== undefined ? String(status) : "the API failed");
  const failedAttempt = num(o.retryAttempt);
  const retryInMs = num(o.retryInMs);
  const next = failedAttempt !== undefined && retryInMs !== undefined ? failedAttempt + 1 : state.attempt;
  state.attempt = next;
  change(
    {
      key: `line:${key}`,
      at,
      name: "api error",
      summary: join(
        clip(text, RESULT_KEPT),
        failedAttempt !== undefined && `attempt ${failedAttempt}${num(o.maxRetries) !== undefined ? ` of ${num(o.maxRetries)! + 1}` : ""}`,
        retryInMs !== undefined && `retrying in ${ms(retryInMs)}`,
      ),
      detail: said({ status, error: clip(text, RESULT_KEPT), request_id: str(error?.requestId), attempt: failedAttempt, retry_in_ms: retryInMs }),
    },
    { error: text, attempt: next, waitingOn: "the model" },
  );
}

/** An `assistant` line: a model call answered (its usage, its answer or the tools it asked for), or the error Claude Code gave up with. */
function assistantLine(read: LineRead): void {
  const { o, at, key, state, change } = read;
  const message = obj(o.message);
  const content = blocks(message?.content);
  const requestId = str(o.requestId) ?? str(message?.id) ?? `line-${key}`;
  const attempt = state.attempt;
  const sentAt = state.callSentAt;
  if (o.isApiErrorMessage === true) return callGaveUp(read, requestId, attempt, sentAt);
  const model = str(message?.model);
  const usage = obj(message?.usage);
  const fields: PartFields = {
    ...(model && model !== "<synthetic>" && { model }),
    ...(num(usage?.input_tokens) !== undefined && { inputTokens: num(usage?.input_tokens) }),
    ...(num(usage?.output_tokens) !== undefined && { outputTokens: num(usage?.output_tokens) }),
    ...(num(usage?.cache_read_input_tokens) !== undefined && { cacheReadTokens: num(usage?.cache_read_input_tokens) }),
    ...(num(usage?.cache_creation_input_tokens) !== undefined && { cacheWriteTokens: num(usage?.cache_creation_input_tokens) }),
    ...(attempt > 1 && { attempt }),
    ...(sentAt !== null && { durationMs: Math.max(0, at - sentAt) }),
    success: true,
  };
  const uses = content.filter((block) => block.type === "tool_use" && str(block.id));
  const text = content
    .filter((block) => block.type === "text")
    .map((block) => String(block.text ?? ""))
    .join("\n");
  // An answer: the model said something and asked for no tool (its stop reason, where written, agrees).
  const answered = uses.length === 0 && message?.stop_reason !== "tool_use" && content.some((block) => block.type === "text");
  const facts: Facts = { succeeded: true, ...(fields.model && { model: fields.model }), part: { kind: "call", id: requestId, at, fields } };
  if (answered) Object.assign(facts, { answeredAt: at, output: clip(text, TEXT_KEPT), waitingOn: "" });
  Object.assign(state, { callSentAt: null, attempt: 1 });
  change(
    {
      key: `line:${key}`,
      at,
      ...(sentAt !== null && { startAt: sentAt }),
      name: "model call",
      summary: join(
        fields.model,
        `${fields.inputTokens ?? 0} in / ${fields.outputTokens ?? 0} out`,
        (fields.cacheReadTokens ?? 0) > 0 && `${fields.cacheReadTokens} cache read`,
        (fields.cacheWriteTokens ?? 0) > 0 && `${fields.cacheWriteTokens} cache write`,
        ms(fields.durationMs),
        attempt > 1 && `${attempt} attempts`,
        str(message?.stop_reason) && `stop: ${str(message?.stop_reason)}`,
      ),
      detail: said({
        request_id: requestId,
        model: fields.model,
        input_tokens: fields.inputTokens,
        output_tokens: fields.outputTokens,
        cache_read_tokens: fields.cacheReadTokens,
        cache_creation_tokens: fields.cacheWriteTokens,
        duration_ms: fields.durationMs,
        attempt: attempt > 1 ? attempt : undefined,
        stop_reason: str(message?.stop_reason),
      }),
    },
    facts,
  );
  const tools = { ...state.tools };
  for (const use of uses) {
    const id = str(use.id)!;
    const name = str(use.name) ?? "?";
    tools[id] = { at, name };
    const input = inputSummary(name, obj(use.input));
    change(
      { key: `line:${key}:${id}`, at, name: `tool ${name}`, summary: join("asked for", input), detail: said({ tool_use_id: id, tool_name: name, input }) },
      { part: { kind: "tool", id, at, fields: { name } }, waitingOn: `tool ${name}` },
    );
  }
  const open = Object.entries(tools);
  state.tools = Object.fromEntries(open.slice(Math.max(0, open.length - OPEN_TOOLS_KEPT)));
}

/** The error Claude Code gave up with, after its retries: the call failed. */
function callGaveUp({ o, at, key, state, change }: LineRead, requestId: string, attempt: number, sentAt: number | null): void {
  const message = obj(o.message);
  const text = clip(textOf(message?.content).trim() || str(o.error) || "the API failed", TEXT_KEPT);
  const status = num(o.apiErrorStatus);
  Object.assign(state, { callSentAt: null, attempt: 1 });
  const fields: PartFields = {
    success: false,
    error: text,
    ...(attempt > 1 && { attempt }),
    ...(sentAt !== null && { durationMs: Math.max(0, at - sentAt) }),
  };
  change(
    {
      key: `line:${key}`,
      at,
      ...(sentAt !== null && { startAt: sentAt }),
      name: "model call",
      summary: join(`failed: ${clip(text, RESULT_KEPT)}`, attempt > 1 && `${attempt} attempts`),
      detail: said({ request_id: requestId, status, attempt, error: text }),
    },
    { exhausted: true, error: text, ...(attempt > 1 && { attempt }), waitingOn: "", part: { kind: "call", id: requestId, at, fields } },
  );
}

/** What a tool was asked to do, in a line: a command, a file, a pattern. */
function inputSummary(name: string, input: Json | undefined): string | undefined {
  if (!input) return undefined;
  const said =
    str(input.command) ?? str(input.file_path) ?? str(input.path) ?? str(input.pattern) ?? str(input.url) ?? str(input.query) ?? str(input.description);
  if (said === undefined) return undefined;
  return clip(name === "Bash" && str(input.command) ? `$ ${said}` : said, RESULT_KEPT);
}

/** A session file past this is not Claude Code's: it is not read. */
const MAX_SESSION_FILE_BYTES = 64 * 1024;

/**
 * Claude Code's runs: `sessions/<pid>.json`, written while it runs (`status` busy mid-turn) and
 * removed when it exits; a killed one leaves it. Its `procStart` is the
 * process's start in clock ticks (/proc's), so a pid used again by another process is told apart;
 * its `pidDomain` names the machine (its machine-id) and the pid namespace: a run on another
 * machine (a home folder shared) or in another namespace cannot be told, and is left alone.
 */
function runs(folder: string): AgentRun[] {
  const dir = path.join(folder, "sessions");
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((name) => /^\d+\.json$/.test(name));
  } catch {
    return [];
  }
  const found: AgentRun[] = [];
  for (const name of names) {
    try {
      const read = readSmallJson(path.join(dir, name), { maxBytes: MAX_SESSION_FILE_BYTES, links: "refuse", shape: obj });
      if (!("value" in read)) continue;
      const { value: said, stat } = read;
      const pid = num(said.pid);
      const session = str(said.sessionId);
      if (pid === undefined || !session) continue;
      found.push({
        pid,
        session,
        busy: said.status === "busy",
        liveness: livenessOf(pid, str(said.procStart), str(said.pidDomain)),
        lastSeenAt: Math.max(num(said.updatedAt) ?? 0, num(said.statusUpdatedAt) ?? 0, stat.mtimeMs),
      });
    } catch {
      // Being written, or removed, at this moment: the next look reads it.
    }
  }
  return found;
}

function livenessOf(pid: number, procStart: string | undefined, pidDomain: string | undefined): AgentRun["liveness"] {
  if (pidDomain) {
    const [, machine, , namespace] = /^linux:([0-9a-f]+):pid:(\[(\d+)\])?/.exec(pidDomain) ?? [];
    const here = hostDomain();
    if ((machine && here.machine && machine !== here.machine) || (namespace && here.namespace && namespace !== here.namespace)) return "unknown";
  }
  if (!pidExists(pid)) return "gone";
  if (procStart === undefined) return "alive";
  const started = processStartTicks(pid);
  return started === null || started === procStart ? "alive" : "gone";
}

let host: { machine: string | null; namespace: string | null } | undefined;
/** This machine's id and this process's pid namespace, as Claude Code's pidDomain names them. */
function hostDomain(): { machine: string | null; namespace: string | null } {
  if (host) return host;
  const read = (fn: () => string) => {
    try {
      return fn();
    } catch {
      return null;
    }
  };
  host = {
    machine: read(() => fs.readFileSync("/etc/machine-id", "utf8").trim()),
    namespace: read(() => /\[(\d+)\]/.exec(fs.readlinkSync("/proc/self/ns/pid"))?.[1] ?? "") || null,
  };
  return host;
}
