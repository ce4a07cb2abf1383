import fs from "node:fs";
import path from "node:path";
import type { Facts, LifecycleChange, PartFields, Step } from "../mapping/changes";
import { join, ms, said } from "../dialects/stepText";
import { GEMINI_CLI_SERVICE } from "../dialects/geminiCli";
import type { AgentFiles, AgentRun, FileRead } from "./agentFiles";
import { clip, num, obj, PROMPT_KEPT, RESULT_KEPT, str, TEXT_KEPT, type Json } from "./lineFields";

/**
 * Gemini CLI's own session files (what 0.61.0 writes, tests/fixtures/gemini-sessions):
 * `tmp/<project>/chats/session-<minute>-<session id's first 8>.jsonl` under its folder (~/.gemini,
 * or $GEMINI_CLI_HOME/.gemini), one JSON object a line: a header (`sessionId`, `projectHash`,
 * `startTime`, `kind`; written again when a run resumes the session), messages (`id`, `timestamp`,
 * `type` `user` or `gemini`), a message written again whole under its `id` when it changes (its
 * `tokens`, then its `toolCalls` with their status and result), and `$set` lines that update the
 * session's own fields (`lastUpdated`, `sessionId`, `messages`: the history as sent, copies of
 * messages already written). A prompt is a turn (`message:<its id>`) in the session; each `gemini`
 * message is one model call (the main model's: the router's call and failed attempts are not
 * written, nor is the error a run gave up with). The file carries neither the prompt id nor the
 * process that Gemini CLI's telemetry names a turn by: a run seen both ways is one turn by its
 * session and when its prompt was sent (`promptSent`), its calls and tools paired in order.
 */

/** What the file's earlier lines left: the turn it is in, and what was already shown of each message. */
interface GeminiFileState {
  session: string | null;
  /** The open (or latest) prompt's message id, and when it was written. */
  prompt: string | null;
  promptAt: number | null;
  /** When the turn's last line was written: a model call's start (the CLI sends the next request then). */
  lastAt: number | null;
  /** Each model message's tokens once shown, by message id: a message written again shows only what changed. */
  calls: Record<string, boolean>;
  /** Each tool call's status once shown, by its call id. */
  tools: Record<string, string>;
  /** Whether the turn has its answer (a text with no tool call waiting). */
  answered: boolean;
  /** A header was written since the open prompt: a run resumed the session, and the history it starts with is no give-up. */
  resumed?: boolean;
}

/** What a turn Gemini CLI took out of its history failed with: its files keep no error (the CLI printed it, its telemetry says it). */
export const GAVE_UP = "Gemini CLI gave up on the prompt (its retries exhausted) or it was cancelled; its files keep no error";

const SERVICE = GEMINI_CLI_SERVICE;
/** A turn's messages and tools remembered past this many are forgotten, so a state stays small. */
const REMEMBERED = 200;

const list = (value: unknown): Json[] => (Array.isArray(value) ? value.map(obj).filter((item): item is Json => item !== undefined) : []);

/** A message's text: a string, or its text parts joined (thoughts left out). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return list(content)
    .filter((part) => typeof part.text === "string" && part.thought !== true)
    .map((part) => part.text as string)
    .join("");
}

/** Keep the latest `REMEMBERED` entries of a record. */
const bounded = <T>(record: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(record).slice(-REMEMBERED));

export const geminiFiles: AgentFiles<GeminiFileState> = {
  name: "gemini-cli",
  // tmp/<project>/chats/session-*.jsonl (a subagent's own file is in a folder below chats/, not read).
  isTranscript: (relative) => /^tmp\/[^/]+\/chats\/session-[^/]+\.jsonl$/.test(relative),
  watched: [{ folder: "tmp", depth: 2 }],
  emptyState: () => ({ session: null, prompt: null, promptAt: null, lastAt: null, calls: {}, tools: {}, answered: false }),
  sessionOf: (state) => state.session,
  mapLine,
  runs,
  endedMidTurn(run, state, endedAt) {
    if (!state.prompt || state.answered || state.session !== run.session) return null;
    // Gemini CLI writes no pid: it is known only when the follower saw its process running.
    const by = run.pid !== null ? `Gemini CLI (pid ${run.pid})` : "Gemini CLI (pid unknown)";
    const summary = run.pid !== null ? `${by} ended mid-turn` : "no answer, and no Gemini CLI process runs in its project";
    return {
      kind: "turn",
      keys: [`message:${state.prompt}`],
      service: SERVICE,
      session: run.session,
      step: {
        key: `ended:${run.session}:${run.pid ?? state.prompt}`,
        at: endedAt,
        name: "process ended",
        summary,
        detail: said({ pid: run.pid ?? undefined }),
      },
      facts: { abandonedBy: by },
    };
  },
};

function mapLine(line: unknown, before: GeminiFileState): { changes: LifecycleChange[]; state: GeminiFileState } {
  const o = obj(line);
  if (!o) return { changes: [], state: before };
  const state: GeminiFileState = { ...before };
  // The header (first, and again when a run resumes the session) and `$set` name the session.
  const set = obj(o.$set);
  const session = str(o.sessionId) ?? str(set?.sessionId);
  if (session) state.session = session;
  if (str(o.sessionId) && state.prompt) state.resumed = true;
  const gaveUp = gaveUpOn(set, state);
  if (gaveUp) return gaveUp;
  const id = str(o.id);
  const at = Date.parse(String(o.timestamp ?? ""));
  if (!id || !Number.isFinite(at)) return { changes: [], state };
  const changes: LifecycleChange[] = [];
  const change = (step: Step, facts: Facts): LifecycleChange => {
    const made: LifecycleChange = {
      kind: "turn",
      keys: [`message:${state.prompt}`],
      service: SERVICE,
      ...(state.session && { session: state.session }),
      step,
      facts,
    };
    changes.push(made);
    return made;
  };
  const read: LineRead = { o, id, at, state, change };
  if (o.type === "user") userLine(read);
  else if (o.type === "gemini" && state.prompt) modelMessage(read);
  return { changes, state };
}

/** One message line as its mapping reads it: the line, its id and time, the file's state (changed in place), and where its changes go. */
interface LineRead {
  o: Json;
  id: string;
  at: number;
  state: GeminiFileState;
  change: (step: Step, facts: Facts) => LifecycleChange;
}

/** The user's message: a prompt begins the turn; tool results sent back tell nothing new. */
function userLine({ o, id, at, state, change }: LineRead): void {
  const content = list(o.content);
  // Tool results sent back: the tools' own outcomes are on the model's message (its toolCalls).
  if (content.some((part) => part.functionResponse !== undefined)) {
    if (state.prompt) state.lastAt = at;
    return;
  }
  if (id === state.prompt) return;
  const text = textOf(o.content);
  Object.assign(state, { prompt: id, promptAt: at, lastAt: at, calls: {}, tools: {}, answered: false, resumed: false });
  const prompt = change(
    { key: `line:${id}`, at, name: "prompt", summary: `a prompt of ${text.length} characters`, detail: said({ message_id: id }) },
    { startedAt: at, processingAt: at, prompt: clip(text, PROMPT_KEPT), waitingOn: "the model" },
  );
  // Its telemetry names the prompt by its prompt id and process, which the file does not carry: the same turn by its session and when it was sent.
  if (state.session) prompt.promptSent = { by: "files", session: state.session, at };
}

/** The model's message: a model call (again when its tokens are written later), and the tools it ran. */
function modelMessage(read: LineRead): void {
  const { o, id, at, state } = read;
  const calls = { ...state.calls };
  const tools = { ...state.tools };
  const toolCalls = list(o.toolCalls);
  if (!(id in calls) || (obj(o.tokens) && !calls[id])) modelCall(read, calls, toolCalls);
  // A text the model said before asking for tools was no answer: the turn goes on.
  if (toolCalls.length > 0) state.answered = false;
  for (const call of toolCalls) toolRan(read, call, toolCalls, tools);
  state.calls = bounded(calls);
  state.tools = bounded(tools);
  state.lastAt = at;
}

/** A model call: its tokens may come with a later write of the same message. */
function modelCall({ o, id, at, state, change }: LineRead, calls: Record<string, boolean>, toolCalls: Json[]): void {
  const tokens = obj(o.tokens);
  const model = str(o.model);
  const seen = id in calls;
  const text = textOf(o.content);
  const cached = num(tokens?.cached);
  const input = num(tokens?.input);
  const fields: PartFields = {
    success: true,
    // Its telemetry names the call by its event, not its message: paired in order (mapping/fold.ts `joinedParts`).
    toldBy: "files",
    ...(model && { model }),
    ...(input !== undefined && { inputTokens: Math.max(0, input - (cached ?? 0)) }),
    ...(num(tokens?.output) !== undefined && { outputTokens: num(tokens?.output) }),
    ...(cached !== undefined && { cacheReadTokens: cached }),
    // Its duration from the line before it (the CLI sends the request then), said once: a write of its tokens later is not a call again.
    ...(!seen && state.lastAt !== null && { durationMs: Math.max(0, at - state.lastAt) }),
  };
  const step: Step = {
    key: `line:${id}${tokens ? ":tokens" : ""}`,
    at,
    ...(fields.durationMs !== undefined && { startAt: at - fields.durationMs }),
    name: "model call",
    summary: join(
      model,
      tokens && `${fields.inputTokens ?? 0} in / ${fields.outputTokens ?? 0} out${cached ? ` (${cached} cached)` : ""}`,
      ms(fields.durationMs),
    ),
    detail: said({
      message_id: id,
      model,
      input_tokens: fields.inputTokens,
      output_tokens: fields.outputTokens,
      cached_tokens: cached,
      thoughts_tokens: num(tokens?.thoughts),
    }),
  };
  calls[id] = tokens !== undefined;
  const answer = text.trim() !== "" && toolCalls.length === 0;
  if (answer) state.answered = true;
  // A message with no text asked for tools: Gemini CLI writes them (toolCalls) only once they ran.
  const waitingOn = answer ? "" : toolCalls.length === 0 && text.trim() === "" ? "its tools" : "the model";
  change(step, {
    processingAt: at,
    ...(model && { model }),
    ...(answer ? { succeeded: true, answeredAt: at, output: clip(text, TEXT_KEPT) } : {}),
    waitingOn,
    part: { kind: "call", id: `message:${id}`, at, fields },
  });
}

/** A tool the model's message says ran, as its status is now: a step each time the status changes. */
function toolRan({ id, at, change }: LineRead, call: Json, toolCalls: Json[], tools: Record<string, string>): void {
  const callId = str(call.id);
  const status = str(call.status);
  if (!callId || !status || tools[callId] === status) return;
  tools[callId] = status;
  const name = str(call.name) ?? "?";
  const doneAt = Date.parse(String(call.timestamp ?? ""));
  const done = status === "success" || status === "error" || status === "cancelled";
  const durationMs = done && Number.isFinite(doneAt) ? Math.max(0, doneAt - at) : undefined;
  const failed = status === "error" || status === "cancelled";
  const error = failed ? clip(toolError(call) ?? status, RESULT_KEPT) : undefined;
  const output = !failed ? toolOutput(call) : undefined;
  const stepAt = Number.isFinite(doneAt) ? doneAt : at;
  const waiting = toolCalls.find((other) => !["success", "error", "cancelled"].includes(String(other.status)));
  change(
    {
      key: `line:${id}:${callId}:${status}`,
      at: stepAt,
      ...(durationMs !== undefined && { startAt: at }),
      name: `tool ${name}`,
      summary: join(status === "success" ? "ok" : failed ? `${status}: ${error}` : status, argsOf(call), ms(durationMs)),
      detail: said({ tool_call_id: callId, tool_name: name, status, duration_ms: durationMs, result: output ?? error }),
    },
    {
      waitingOn: waiting ? `tool ${String(waiting.name)}` : "the model",
      part: {
        kind: "tool",
        id: callId,
        at: stepAt,
        fields: { toldBy: "files", name, ...(durationMs !== undefined && { durationMs }), ...(done && { success: !failed }), ...(error && { error }) },
      },
    },
  );
}

/**
 * The open prompt's turn failed, when the CLI wrote its history (`$set` `messages`) without the
 * prompt and with no answer to it: it takes a request it gave up on (its retries exhausted), or one
 * cancelled, out of its history. Its run then ends; the file says nothing of why.
 */
function gaveUpOn(set: Json | undefined, state: GeminiFileState): { changes: LifecycleChange[]; state: GeminiFileState } | null {
  const history = set?.messages;
  if (!Array.isArray(history) || !state.prompt || state.answered || state.resumed || list(history).some((message) => message.id === state.prompt)) return null;
  const at = Date.parse(String(set!.lastUpdated ?? ""));
  const endedAt = Number.isFinite(at) ? at : (state.lastAt ?? state.promptAt ?? 0);
  const change: LifecycleChange = {
    kind: "turn",
    keys: [`message:${state.prompt}`],
    service: SERVICE,
    ...(state.session && { session: state.session }),
    step: {
      key: `line:${state.prompt}:gave-up`,
      at: endedAt,
      name: "gave up",
      summary: "the prompt was taken out of the CLI's history, unanswered",
      detail: said({ message_id: state.prompt }),
    },
    facts: { endedAt, failed: true, unsaidError: GAVE_UP, waitingOn: "" },
  };
  return { changes: [change], state: { ...state, prompt: null, lastAt: endedAt } };
}

/** A tool's error: its response's `error`, else what the CLI displayed. */
function toolError(call: Json): string | undefined {
  for (const part of list(call.result)) {
    const error = str(obj(obj(part.functionResponse)?.response)?.error);
    if (error) return error;
  }
  return str(call.resultDisplay);
}

function toolOutput(call: Json): string | undefined {
  for (const part of list(call.result)) {
    const output = obj(obj(part.functionResponse)?.response)?.output;
    if (typeof output === "string") return clip(output.trim(), RESULT_KEPT);
  }
  return undefined;
}

/** A tool call's arguments, in short: its first argument's value (`note.txt`, `ls -la`). */
function argsOf(call: Json): string | undefined {
  const first = Object.values(obj(call.args) ?? {})[0];
  return typeof first === "string" ? clip(first, 80) : undefined;
}

/**
 * Gemini CLI's runs: it writes no pid nor lock file, and holds no file open (each line is appended
 * and closed). So a session's open turn is busy, and its process is a Gemini CLI process writing to
 * this folder (its GEMINI_CLI_HOME, else HOME) whose working folder is the session's project (its
 * `tmp/<project>/.project_root`): alive while one runs there, gone when none does; unknown where
 * the processes cannot be read (no /proc, another user's).
 */
function runs(folder: string, files?: () => readonly FileRead<GeminiFileState>[]): AgentRun[] {
  const open = (files?.() ?? []).filter((file) => file.session !== null && file.state.prompt !== null && !file.state.answered);
  if (open.length === 0) return [];
  const processes = geminiProcesses(real(folder));
  const found: AgentRun[] = [];
  for (const { state, ...file } of open) {
    let root: string | null = null;
    try {
      root = fs.readFileSync(path.join(path.dirname(path.dirname(file.path)), ".project_root"), "utf8").trim();
    } catch {
      // No project root said: its process cannot be told.
    }
    const running = processes === null || root === null ? undefined : processes.find((process) => process.cwd === root);
    const liveness: AgentRun["liveness"] = processes === null || root === null ? "unknown" : running ? "alive" : "gone";
    found.push({ pid: running?.pid ?? null, session: file.session!, turn: state.prompt!, busy: true, liveness, lastSeenAt: state.lastAt ?? 0 });
  }
  return found;
}

/** A folder's own path (a home reached through a link is the same home). */
function real(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}

/** The Gemini CLI processes writing to `folder`, outermost first (it starts itself again as a child); null where /proc cannot tell. */
function geminiProcesses(folder: string): { pid: number; cwd: string }[] | null {
  let pids: number[];
  try {
    pids = fs
      .readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return null;
  }
  const found: { pid: number; ppid: number; cwd: string }[] = [];
  for (const pid of pids) {
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, 4);
      if (!args.some((arg) => /(^|\/)(gemini|gemini\.js)$/.test(arg) || arg.includes("@google/gemini-cli/"))) continue;
      const env = new Map(
        fs
          .readFileSync(`/proc/${pid}/environ`, "utf8")
          .split("\0")
          .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)] as const),
      );
      const home = env.get("GEMINI_CLI_HOME") || env.get("HOME");
      if (!home || real(path.resolve(home, ".gemini")) !== folder) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      found.push({ pid, ppid, cwd: fs.readlinkSync(`/proc/${pid}/cwd`) });
    } catch {
      // Gone meanwhile, or not ours to read: a process of another user is not one of this folder's.
    }
  }
  return found.filter((process) => !found.some((parent) => parent.pid === process.ppid));
}
