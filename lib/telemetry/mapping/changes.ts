import type { AttributeValue } from "../records";

/**
 * What one received record says about one lifecycle: which lifecycle (by the keys that name it),
 * one step of its history (with a key of its own, so a record received twice counts once), and the
 * facts it adds. The mapping (pure, lib/telemetry/mapping) makes these; the store
 * (lib/telemetry/store/telemetryStore.ts) applies them and derives each lifecycle's state from its facts,
 * so the order records arrive in does not matter.
 */
export type LifecycleKind = "turn" | "call" | "message" | "agent";

export interface LifecycleChange {
  kind: LifecycleKind;
  /** What names the lifecycle, most telling first: `prompt:<id>`, `trace:<id>`, `message:<destination>/<id>`, `span:<id>`. The first names a new one. */
  keys: string[];
  /**
   * The key of the lifecycle this one happened inside (`span:<parentSpanId>`: a model call or a tool
   * inside an agent's run or step): the store makes it part of that one, now if it is known, else
   * when it arrives (spans are exported as they end, a parent after its children). A parent that
   * never arrives (a plain HTTP span) leaves it a lifecycle of its own.
   */
  parent?: string;
  /** The program that sent it (`service.name`): the workspace its rows show. */
  service: string;
  session?: string;
  traceId?: string;
  /**
   * A turn whose two intakes share no key that names it (Gemini CLI's files name a prompt by its
   * message, its telemetry by its prompt id and process; Codex's telemetry names its turn only once
   * the turn's span ends): who told it, its session, and when its prompt was sent. The store makes a
   * turn of the same session that the other intake told, its prompt sent within `PROMPT_JOIN_MS`,
   * this one (and mapping/fold.ts `joinedParts` pairs their calls).
   */
  promptSent?: PromptSent;
  step: Step;
  facts: Facts;
}

/** The two intakes of one agent's sessions: its own files (lib/telemetry/agentFiles) and its received telemetry. */
export type Intake = "files" | "telemetry";

export interface PromptSent {
  by: Intake;
  session: string;
  at: number;
}

/** How far apart the two intakes may say one prompt was sent (the file's line and the telemetry's event are written a few milliseconds apart; two prompts of one session are seconds apart). */
export const PROMPT_JOIN_MS = 1000;

export interface Step {
  /** Unique for what happened: the same record received again has the same key. */
  key: string;
  /** When it ended (or happened, for an instant). */
  at: number;
  /** When it began, for what took time (a span, a call a log says the duration of): a timeline draws it from here to `at`. */
  startAt?: number;
  /** The key of the step it happened inside (a model call inside an agent's step, a tool inside a turn): a timeline nests it there. */
  parentKey?: string;
  /** What happened, as a person reads it: `api_request`, `tool Bash`, `process`, ... */
  name: string;
  /** One line about it: `claude-sonnet-4-5, 120 in / 30 out, $0.0008, 30 ms`. */
  summary: string;
  detail: Record<string, AttributeValue>;
}

/** What a step tells. Times are epoch ms; sums add up over a lifecycle's steps. */
export interface Facts {
  /** It began (a prompt sent, a call or message created). */
  startedAt?: number;
  /** It waited in a queue from then (a message published). */
  queuedAt?: number;
  /** It was worked on from then (processing). */
  processingAt?: number;
  /** Back in its queue from then, to be tried again (BullMQ's `delay` or `retry` after a failed attempt): queued until a later attempt begins. */
  requeuedAt?: number;
  /** A definite end (the turn's span, a call's span, a message's processing span). */
  endedAt?: number;
  /** An end the next step may undo: the answer of a turn seen without its span (logs alone). */
  answeredAt?: number;
  /**
   * With `endedAt`: the end of a span that holds the lifecycle's others (an agent's run or step),
   * which says how it ended whenever its calls and tools ended; the outermost (first begun) of them.
   */
  enclosing?: boolean;
  /** With `endedAt`: that end was a failure (status ERROR, a failed processing). The latest end says how it ended. */
  failed?: boolean;
  /** The error to say of a failed end when no step says one (Gemini CLI's files, which keep none): any error told elsewhere (its telemetry's) is the lifecycle's. */
  unsaidError?: string;
  /** Gave up retrying (Claude Code's api_retries_exhausted): failed, unless an answer came after. */
  exhausted?: boolean;
  /** An answer arrived (a model call that succeeded): a turn that ends with none failed. */
  succeeded?: boolean;
  error?: string;
  prompt?: string;
  output?: string;
  model?: string;
  /** The highest attempt seen (a retried call's). */
  attempt?: number;
  /**
   * What the lifecycle waits on from this step on, as a person says it (`the model`, `tool Bash`);
   * "" when it waits on nothing (answered). The latest step's counts: a stuck turn says what it waited on.
   */
  waitingOn?: string;
  /** The program running it ended without finishing it (`Claude Code (pid 27967)`): it is stuck from then, saying so. */
  abandonedBy?: string;
  /**
   * How one attempt of a model call went, for a client that numbers no attempts (Gemini CLI): only
   * what follows says whether a failed one was retried. A call's attempts are the failures since the
   * previous answer, and the answer; a definite end whose latest attempt failed is a failure.
   */
  attemptOutcome?: "failed" | "answered";
  /**
   * One model call or tool use of the lifecycle, by its own id (a call's request id, a tool's use
   * id): what the span and the log record of the same call each say is merged into one, so a call
   * both report is counted once. Tokens, cost and counts are sums over these.
   */
  part?: Part;
}

export interface Part {
  kind: "call" | "tool";
  id: string;
  at: number;
  fields: PartFields;
}

export interface PartFields {
  model?: string;
  /**
   * A call whose record names no model, of a client whose every call in a lifecycle is of that
   * lifecycle's model (a Codex turn's answers: its turn's span and its prompt name the model): it
   * takes that model, and its price, once the lifecycle's is known (mapping/fold.ts `modelsFilled`).
   */
  modelOfLifecycle?: boolean;
  name?: string;
  /** Input tokens not read from or written to a cache (as Anthropic counts them: a client that counts cached tokens in its input, as OpenAI's do, has them taken out). */
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Of the output tokens, those the model spent reasoning (OpenAI's reasoning models say it; not added again to the sums). */
  reasoningTokens?: number;
  /** The cost the client said. */
  costUsd?: number;
  /** Without one: the cost at list prices (lib/telemetry/prices.ts), set when parts are merged (mapping/fold.ts), never by a dialect. */
  estimatedCostUsd?: number;
  durationMs?: number;
  ttftMs?: number;
  attempt?: number;
  /**
   * Calls that say the same `attemptsOf` (their parent's span) and follow one another are tries at one
   * call when the earlier failed: a client that makes a span per attempt (the AI SDK 6) then shows
   * one call with its attempts, not one call per try.
   */
  attemptsOf?: string;
  /**
   * The span that told of it and the span it happened inside: a model call told by a span inside
   * another call's span (the Anthropic SDK's own span inside OpenInference's) is the same call told
   * twice, counted once.
   */
  spanId?: string;
  parentSpanId?: string;
  success?: boolean;
  error?: string;
  /**
   * The intake that told of a call or tool use the other names by another id (Codex's telemetry
   * names a call by its span, its files by its response; Gemini CLI's by its event and by its
   * message or call id): in a lifecycle both told, those each told, in the order they ended, are
   * paired, each pair one (mapping/fold.ts `joinedParts`). One only one intake knows of (Gemini's
   * router's call) says none.
   */
  toldBy?: Intake;
}

/** What maps to no lifecycle: counted per service, signal and name, and shown on the Health page. */
export interface Unmapped {
  service: string;
  signal: "span" | "log" | "metric";
  name: string;
  /** The dialect that knows it and shows it as no lifecycle on purpose (`Dialect.knows`): counted apart from what no dialect understands. */
  knownBy?: string;
}
