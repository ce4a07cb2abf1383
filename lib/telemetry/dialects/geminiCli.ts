import { booleanAttr, numberAttr, stringAttr, type Attributes, type LogRecord, type SpanRecord } from "../records";
import type { Facts, LifecycleChange, PartFields, Step } from "../mapping/changes";
import type { Dialect } from "./dialect";
import { join, ms, said, spanStep } from "./stepText";

/**
 * Gemini CLI's telemetry (what 0.61.0 exports, tests/fixtures/otlp/gemini-cli-0.61.0) as one turn
 * per prompt. Its log events (`gemini_cli.*`) carry the prompt's `prompt_id` and `session.id`; its
 * spans (`llm_call`, `tool_call`, `schedule_tool_calls`, each a trace of its own) carry the prompt
 * id on the model calls only (`gen_ai.prompt.name`), while the tool events carry the trace of the
 * tools' spans. So a turn is named by its prompt and the traces its events were in. A prompt run
 * headless (`gemini -p`) has the session's id for its prompt id, and a resumed session
 * (`--resume`) has the same again: the process (`process.pid` of the resource) tells them apart.
 *
 * The calls are the log events' (`api_response`, `api_error`: the main model's and the router's,
 * `role`), which carry the tokens: the spans only carry them with the traces' extra attributes.
 * Nothing numbers a retry: each `api_error` is an attempt that failed, and what follows says
 * whether it was tried again (`Facts.attemptOutcome`). No event ends a turn: an answer of the main
 * model stands for its end until anything later arrives, and a headless run's end (the session's
 * `plan.approval_mode_duration`, logged as the CLI exits) ends it for good, failed when its latest
 * attempt failed.
 */
const GEMINI_CLI_SCOPE = "gemini-cli";
/** The service.name Gemini CLI gives itself. */
export const GEMINI_CLI_SERVICE = "gemini-cli";

export const geminiCli: Dialect = {
  name: "gemini-cli",
  recognises: (record) => record.signal !== "metric" && record.origin.scope.name === GEMINI_CLI_SCOPE,
  map: (record) => (record.signal === "span" ? geminiCliSpan(record) : record.signal === "log" ? geminiCliLog(record) : null),
};

const service = (resource: Attributes) => stringAttr(resource, "service.name") ?? GEMINI_CLI_SERVICE;

/** A prompt's turn: its prompt id within the process that ran it. */
function turnKey(promptId: string, resource: Attributes): string {
  const pid = numberAttr(resource, "process.pid");
  return pid === undefined ? `prompt:${promptId}` : `prompt:${promptId}@${pid}`;
}

/** A short, stable digest of a text (FNV-1a), to tell apart two records of one millisecond. */
function digest(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/** `main`, or `router` for the router's classifier (`utility_router`), else the role as sent. */
function roleOf(a: Attributes): string | undefined {
  const role = stringAttr(a, "role");
  return role === "utility_router" ? "router" : role;
}

/** The Gemini API's error (`{"error":{"code":503,"message":...,"status":"UNAVAILABLE"}}`) as one line: `503 UNAVAILABLE: The model is overloaded...`. */
function errorText(a: Attributes): string {
  const raw = stringAttr(a, "error") ?? stringAttr(a, "error.message") ?? "";
  const status = numberAttr(a, "status_code");
  try {
    const parsed = JSON.parse(raw) as { error?: { code?: number; status?: string; message?: string } };
    if (parsed.error) return `${join(parsed.error.code ?? status, parsed.error.status).replace(", ", " ")}: ${parsed.error.message ?? raw}`;
  } catch {
    // Not JSON: a network error's message, said as it is.
  }
  return status === undefined || raw.startsWith(String(status)) ? raw || "failed" : `${status}: ${raw}`;
}

/** The text of a response (`response_text`, sent with `logPrompts`): the candidates' text parts, joined. */
function answerText(a: Attributes): string | undefined {
  const raw = stringAttr(a, "response_text");
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as unknown;
    const chunks = (Array.isArray(parsed) ? parsed : [parsed]) as { candidates?: { content?: { parts?: { text?: string; thought?: boolean }[] } }[] }[];
    const text = chunks
      .flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? [])
      .filter((part) => typeof part.text === "string" && !part.thought)
      .map((part) => part.text)
      .join("");
    return text || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The tries of one model call: a prompt's calls in one role, where a failed one (a 503) is followed
 * by the CLI's next try of the same request, and an answered one ends it (mapping/fold.ts counts them).
 */
const triesOf = (promptId: string, role: string | undefined) => `${promptId}:${role ?? "main"}`;

/** A log event of Gemini CLI's as a change to its turn; null for one that is not about a turn (counted as unmapped). */
function geminiCliLog(log: LogRecord): LifecycleChange | null {
  const a = log.attributes;
  const name = (log.eventName ?? "").replace(/^gemini_cli\./, "");
  const session = stringAttr(a, "session.id") ?? stringAttr(log.origin.resource, "session.id");
  // A headless run's prompt id is its session's id (the CLI's gemini.js: `const prompt_id = sessionId`).
  const headlessRunEnd = name === "plan.approval_mode_duration" && booleanAttr(a, "interactive") === false;
  const promptId = headlessRunEnd ? session : stringAttr(a, "prompt_id");
  if (!promptId || !(Object.hasOwn(EVENTS, name) || headlessRunEnd)) return null;
  const key = `log:${digest(JSON.stringify(a))}:${log.atMs}`;
  const step = (summary: string, detail: Record<string, unknown> = {}, startAt?: number, stepName = name): Step => ({
    key,
    at: log.atMs,
    ...(startAt !== undefined && { startAt }),
    ...(log.spanId && { parentKey: `span:${log.spanId}` }),
    name: stepName,
    summary,
    detail: said(detail),
  });
  const model = stringAttr(a, "model");
  const role = roleOf(a);
  const durationMs = numberAttr(a, "duration_ms");
  const startAt = durationMs === undefined ? undefined : log.atMs - durationMs;
  const read: EventRead = { a, atMs: log.atMs, key, promptId, traceId: log.traceId, model, role, durationMs, startAt, step };
  const { facts, made } = headlessRunEnd ? headlessEnd(read) : EVENTS[name as keyof typeof EVENTS](read);
  const keys = [turnKey(promptId, log.origin.resource), ...(log.traceId ? [`trace:${log.traceId}`] : [])];
  // Its files name the prompt by its message, not its prompt id: the same turn by its session and when it was sent.
  const sent = name === "user_prompt" && session ? { promptSent: { by: "telemetry" as const, session, at: log.atMs } } : {};
  return {
    kind: "turn",
    keys,
    service: service(log.origin.resource),
    ...(session && { session }),
    ...(log.traceId && { traceId: log.traceId }),
    ...sent,
    step: made,
    facts,
  };
}

/** A log event as its mapping reads it: its attributes, time and step key, its turn, model call and duration, and how its step is made. */
interface EventRead {
  a: Attributes;
  atMs: number;
  key: string;
  promptId: string;
  traceId: string | null;
  model: string | undefined;
  role: string | undefined;
  durationMs: number | undefined;
  startAt: number | undefined;
  step: (summary: string, detail?: Record<string, unknown>, startAt?: number, stepName?: string) => Step;
}

/** What an event changes, and the step it is seen as. */
interface Mapped {
  facts: Facts;
  made: Step;
}

/** A prompt: the turn begins. */
function userPrompt({ a, atMs, step }: EventRead): Mapped {
  const prompt = stringAttr(a, "prompt");
  const facts: Facts = { startedAt: atMs, processingAt: atMs, ...(prompt !== undefined && { prompt }) };
  const made = step(
    `a prompt of ${prompt?.length ?? numberAttr(a, "prompt_length") ?? "?"} characters${prompt === undefined ? " (its text is exported with logPrompts)" : ""}`,
    { prompt_length: numberAttr(a, "prompt_length"), auth_type: stringAttr(a, "auth_type") },
  );
  return { facts, made };
}

/** A model call sent. */
function apiRequest({ atMs, model, role, step }: EventRead): Mapped {
  const facts: Facts = { processingAt: atMs };
  const made = step(join(role, model), { model, role });
  return { facts, made };
}

/** A model call answered: its tokens and, from the main model, the answer. */
function apiResponse({ a, atMs, key, promptId, model, role, durationMs, startAt, step }: EventRead): Mapped {
  const fields: PartFields = { success: true };
  const set = <K extends keyof PartFields>(field: K, value: PartFields[K] | undefined) => value !== undefined && (fields[field] = value);
  set("model", model);
  set("name", role);
  set("attemptsOf", triesOf(promptId, role));
  // Gemini counts the cached part of a prompt in its prompt's tokens; a part's input tokens are the uncached ones.
  const cachedTokens = numberAttr(a, "cached_content_token_count");
  const prompt = numberAttr(a, "input_token_count");
  set("inputTokens", prompt === undefined ? undefined : Math.max(0, prompt - (cachedTokens ?? 0)));
  set("outputTokens", numberAttr(a, "output_token_count"));
  set("cacheReadTokens", cachedTokens);
  set("durationMs", durationMs);
  // The main model's calls are its files' too (a message each, which carries no event's id): paired in order (mapping/fold.ts `joinedParts`).
  if (role !== "router") fields.toldBy = "telemetry";
  const output = role === "router" ? undefined : answerText(a);
  const finish = Array.isArray(a.finish_reasons) ? a.finish_reasons.join(", ") : stringAttr(a, "finish_reasons");
  // The router's answer is a choice of model, not the turn's: only the main model's answers it.
  const answers = role !== "router";
  const facts: Facts = {
    attemptOutcome: "answered",
    ...(answers && { succeeded: true, answeredAt: atMs, ...(model && { model }), ...(output !== undefined && { output }) }),
    part: { kind: "call", id: key, at: atMs, fields },
  };
  const cached = fields.cacheReadTokens ? ` (${fields.cacheReadTokens} cached)` : "";
  const made = step(
    join(role, model, `${fields.inputTokens ?? 0} in / ${fields.outputTokens ?? 0} out${cached}`, ms(durationMs), finish && `finish: ${finish}`),
    {
      model,
      role,
      input_tokens: fields.inputTokens,
      output_tokens: fields.outputTokens,
      cached_tokens: fields.cacheReadTokens,
      thoughts_tokens: numberAttr(a, "thoughts_token_count"),
      duration_ms: durationMs,
      status_code: numberAttr(a, "status_code"),
      finish_reasons: finish,
    },
    startAt,
  );
  return { facts, made };
}

/** A model call's try that failed. */
function apiError({ a, atMs, key, promptId, model, role, durationMs, startAt, step }: EventRead): Mapped {
  const error = errorText(a);
  const facts: Facts = {
    error,
    attemptOutcome: "failed",
    part: {
      kind: "call",
      id: key,
      at: atMs,
      fields: {
        ...(model && { model }),
        ...(role && { name: role }),
        attemptsOf: triesOf(promptId, role),
        ...(durationMs !== undefined && { durationMs }),
        success: false,
        error,
      },
    },
  };
  const made = step(
    join(role, model, error, ms(durationMs)),
    { model, role, status_code: numberAttr(a, "status_code"), error_type: stringAttr(a, "error.type"), error, duration_ms: durationMs },
    startAt,
  );
  return { facts, made };
}

/** A tool's use and its outcome. */
function toolCall({ a, atMs, promptId, traceId, durationMs, startAt, step }: EventRead): Mapped {
  const tool = stringAttr(a, "function_name");
  const success = booleanAttr(a, "success");
  const error = success === false ? (stringAttr(a, "error.message") ?? stringAttr(a, "error") ?? "failed") : undefined;
  const args = stringAttr(a, "function_args");
  // Its files name the tool's use by its call id, which the event does not carry: paired in order (mapping/fold.ts `joinedParts`).
  const facts: Facts = {
    part: {
      kind: "tool",
      id: `${traceId ?? promptId}:${tool ?? "?"}:${atMs}:${digest(args ?? "")}`,
      at: atMs,
      fields: {
        toldBy: "telemetry",
        ...(tool && { name: tool }),
        ...(durationMs !== undefined && { durationMs }),
        ...(success !== undefined && { success }),
        ...(error && { error }),
      },
    },
  };
  const made = step(
    join(tool, stringAttr(a, "decision"), success === false ? `failed: ${error}` : "ok", ms(durationMs)),
    {
      tool_name: tool,
      decision: stringAttr(a, "decision"),
      success,
      duration_ms: durationMs,
      function_args: args,
      tool_type: stringAttr(a, "tool_type"),
      error,
      error_type: stringAttr(a, "error_type"),
    },
    startAt,
  );
  return { facts, made };
}

/** The headless run's end: the CLI disposes of its session as it exits. */
function headlessEnd({ a, atMs, step }: EventRead): Mapped {
  const facts: Facts = { endedAt: atMs };
  const made = step("the headless run ended", { mode: stringAttr(a, "mode") }, undefined, "run ended");
  return { facts, made };
}

/** The log events that tell of a turn, each with its mapping; any other (its configuration, a file read, the routing decision, the GenAI conventions' copies) is counted as unmapped. */
const EVENTS = {
  user_prompt: userPrompt,
  api_request: apiRequest,
  api_response: apiResponse,
  api_error: apiError,
  tool_call: toolCall,
};

/** A span of Gemini CLI's as a step of its turn: the model calls by their prompt, the tools by their trace (which the tool events share). */
function geminiCliSpan(span: SpanRecord): LifecycleChange | null {
  const a = span.attributes;
  const operation = stringAttr(a, "gen_ai.operation.name");
  const session = stringAttr(a, "gen_ai.conversation.id") ?? stringAttr(span.origin.resource, "session.id");
  const failed = span.status.code === "error";
  const error = failed ? errorText({ error: span.status.message }) : undefined;
  const took = ms(span.endMs - span.startMs);
  let keys: string[];
  let name: string;
  let summary: string;
  let facts: Facts = {};
  switch (operation) {
    case "llm_call": {
      const promptId = stringAttr(a, "gen_ai.prompt.name");
      if (!promptId) return null;
      const model = stringAttr(a, "gen_ai.response.model") ?? stringAttr(a, "gen_ai.request.model");
      const inputTokens = numberAttr(a, "gen_ai.usage.input_tokens");
      keys = [turnKey(promptId, span.origin.resource), `trace:${span.traceId}`];
      name = "model call";
      summary = join(
        model,
        failed ? `failed: ${error}` : inputTokens !== undefined && `${inputTokens} in / ${numberAttr(a, "gen_ai.usage.output_tokens") ?? 0} out`,
        took,
      );
      // The agent's own call (it offers the model tools; the router's classifier and the CLI's other
      // utility calls offer none) that answered stands for the turn's end until anything later
      // arrives: its answer's log event is a moment earlier than the span's end.
      const offersTools = (stringAttr(a, "gen_ai.tool.definitions") ?? "[]") !== "[]";
      facts = { processingAt: span.startMs, ...(error ? { error } : offersTools && { answeredAt: span.endMs }) };
      break;
    }
    case "tool_call":
      keys = [`trace:${span.traceId}`];
      name = `tool ${stringAttr(a, "gen_ai.tool.name") ?? "?"}`;
      summary = join(failed ? `failed: ${error}` : "done", took);
      break;
    case "schedule_tool_calls":
      keys = [`trace:${span.traceId}`];
      name = "tools scheduled";
      summary = join(failed ? `failed: ${error}` : "done", took);
      break;
    default:
      return null;
  }
  const step = spanStep(
    span,
    name,
    summary,
    said({
      span: span.name,
      span_id: span.spanId,
      duration_ms: Math.round(span.endMs - span.startMs),
      model: stringAttr(a, "gen_ai.request.model"),
      tool_call_id: stringAttr(a, "gen_ai.tool.call_id"),
      status: failed ? span.status.message || "error" : undefined,
    }),
  );
  return { kind: "turn", keys, service: service(span.origin.resource), ...(session && { session }), traceId: span.traceId, step, facts };
}
