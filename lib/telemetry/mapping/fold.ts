import type { CallCosts } from "../../model/money";
import type { State } from "../../model/states";
import { estimateCostUsd } from "../prices";
import type { Facts, LifecycleKind, Part, PartFields } from "./changes";
import { stoppedMidAnswer, UNFINISHED_CALL } from "./stoppedCalls";

/** An error that only guesses why a call stopped (its span ended with no answer and no error). */
const guessed = (error: unknown) => error === UNFINISHED_CALL;

/** What a set of model calls used: a lifecycle's, and the store's sums over many (store/queries/callSums.ts). */
export interface UsageSums extends CallCosts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** A lifecycle as its steps and parts add up: what the store keeps in its row and the pages show. */
interface Folded extends UsageSums {
  state: State;
  startedAt: number;
  queuedAt: number | null;
  processingAt: number | null;
  /** When it finished (its end, or the answer or the give-up that stands for one); null while it goes on. */
  finishedAt: number | null;
  firstAt: number;
  lastAt: number;
  prompt: string | null;
  output: string | null;
  error: string | null;
  model: string | null;
  attempt: number | null;
  lastStep: string;
  tools: number;
  /** What it waits on, as its latest step that said so says (null: nothing said, or answered). */
  waitingOn: string | null;
  /** The program that ended without finishing it, and when (the step that said so). */
  abandonedBy: string | null;
  abandonedAt: number | null;
}

export interface FoldStep {
  /** The step's own key: of two steps at the same time, the one with the greater key counts as the later. */
  key: string;
  at: number;
  name: string;
  summary: string;
  facts: Facts;
}

/** Where a step stands among its lifecycle's: by time, then by key, so arrival order never decides. */
interface Place {
  at: number;
  key: string;
}

const after = (a: Place, b: Place) => a.at > b.at || (a.at === b.at && a.key > b.key);

/** A value with the place of the step that said it. */
type Said<T> = Place & { value: T };

/**
 * What a lifecycle's steps and parts add up to so far, kept so that each new step is added to it
 * (`addStep`) rather than every step read again; `summarize` says what it adds up to. Adding the
 * same steps in any order, or in any number of batches, gives the same tally.
 */
export interface Tally {
  kind: LifecycleKind;
  firstAt: number | null;
  /** The latest step: its place and how it reads (`name: summary`). */
  last: Said<string> | null;
  lastAt: number | null;
  startedAt: number | null;
  queuedAt: number | null;
  processingAt: number | null;
  /** The latest attempt's start, and the latest time it went back to its queue: the later of the two says whether it waits. */
  latestProcessingAt: number | null;
  requeuedAt: number | null;
  /** The definite end that counts: the latest `endedAt`, then the latest step. */
  end: (Place & { endedAt: number; failed: boolean; enclosing?: true; startedAt?: number; error?: string }) | null;
  succeededAt: number | null;
  /** The latest give-up, and the error it gave (if it said one). */
  exhausted: Said<string | undefined> | null;
  answeredAt: number | null;
  /** The latest error said for a failed end that no step said one for (`Facts.unsaidError`). */
  unsaidError: Said<string> | null;
  /** The first prompt; the latest output, error and model. */
  prompt: Said<string> | null;
  output: Said<string> | null;
  error: Said<string> | null;
  model: Said<string> | null;
  attempt: number | null;
  waitingOn: Said<string> | null;
  abandonedBy: Said<string> | null;
  /** Each attempt of a model call that a step said the outcome of (`Facts.attemptOutcome`). */
  attemptOutcomes: (Place & { failed: boolean })[];
  /** Its model calls and tool uses, by `kind id`, each merged from every record that told of it. */
  parts: Map<string, Part>;
}

export function emptyTally(kind: LifecycleKind): Tally {
  return {
    kind,
    firstAt: null,
    last: null,
    lastAt: null,
    startedAt: null,
    queuedAt: null,
    processingAt: null,
    latestProcessingAt: null,
    requeuedAt: null,
    end: null,
    succeededAt: null,
    exhausted: null,
    unsaidError: null,
    answeredAt: null,
    prompt: null,
    output: null,
    error: null,
    model: null,
    attempt: null,
    waitingOn: null,
    abandonedBy: null,
    attemptOutcomes: [],
    parts: new Map(),
  };
}

const least = (a: number | null, b: number | undefined) => (b === undefined ? a : a === null || b < a ? b : a);
const most = (a: number | null, b: number | undefined) => (b === undefined ? a : a === null || b > a ? b : a);
const later = <T>(kept: Said<T> | null, place: Place, value: T | undefined): Said<T> | null =>
  value === undefined || (kept && !after(place, kept)) ? kept : { at: place.at, key: place.key, value };

/**
 * Whether a step's end is the lifecycle's rather than the one kept: an enclosing span's end (an
 * agent's run) over its calls' and tools' whenever they ended (clocks differ by a fraction of a
 * millisecond between spans), the outermost (first begun) of two enclosing ones, else the latest.
 */
function endOutranks(facts: Facts, step: Place, end: NonNullable<Tally["end"]>): boolean {
  const enclosing = facts.enclosing === true;
  if (enclosing !== (end.enclosing === true)) return enclosing;
  if (enclosing && facts.startedAt !== undefined && end.startedAt !== undefined && facts.startedAt !== end.startedAt) return facts.startedAt < end.startedAt;
  // A span that only stopped says less than one that says why (an SDK's own span inside the instrumentation's, ending a moment later).
  if (facts.failed && end.failed && guessed(facts.error) !== guessed(end.error)) return guessed(end.error);
  return facts.endedAt! > end.endedAt || (facts.endedAt === end.endedAt && after(step, end));
}

/** Add one step (not added before) to a tally. */
export function addStep(tally: Tally, step: FoldStep): void {
  const { facts } = step;
  tally.firstAt = least(tally.firstAt, step.at);
  tally.lastAt = most(tally.lastAt, step.at);
  tally.last = later(tally.last, step, `${step.name}${step.summary ? `: ${step.summary}` : ""}`);
  tally.startedAt = least(tally.startedAt, facts.startedAt);
  tally.queuedAt = least(tally.queuedAt, facts.queuedAt);
  tally.processingAt = least(tally.processingAt, facts.processingAt);
  tally.latestProcessingAt = most(tally.latestProcessingAt, facts.processingAt);
  tally.requeuedAt = most(tally.requeuedAt, facts.requeuedAt);
  const { end } = tally;
  if (facts.endedAt !== undefined && (!end || endOutranks(facts, step, end))) {
    tally.end = {
      at: step.at,
      key: step.key,
      endedAt: facts.endedAt,
      failed: facts.failed === true,
      ...(facts.enclosing && { enclosing: true, startedAt: facts.startedAt }),
      ...(facts.error !== undefined && { error: facts.error }),
    };
  }
  if (facts.succeeded) tally.succeededAt = most(tally.succeededAt, step.at);
  if (facts.exhausted && (!tally.exhausted || after(step, tally.exhausted))) tally.exhausted = { at: step.at, key: step.key, value: facts.error };
  tally.answeredAt = most(tally.answeredAt, facts.answeredAt);
  if (facts.prompt !== undefined && (!tally.prompt || after(tally.prompt, step))) tally.prompt = { at: step.at, key: step.key, value: facts.prompt };
  tally.output = later(tally.output, step, facts.output);
  tally.error = later(tally.error, step, facts.error);
  tally.unsaidError = later(tally.unsaidError, step, facts.unsaidError);
  tally.model = later(tally.model, step, facts.model);
  tally.attempt = most(tally.attempt, facts.attempt);
  tally.waitingOn = later(tally.waitingOn, step, facts.waitingOn);
  tally.abandonedBy = later(tally.abandonedBy, step, facts.abandonedBy);
  if (facts.attemptOutcome) tally.attemptOutcomes.push({ at: step.at, key: step.key, failed: facts.attemptOutcome === "failed" });
}

/** The attempts of the most tried call (0 when none failed), and whether the latest attempt failed, from the outcomes in the order they happened. */
function attemptsOf(outcomes: Tally["attemptOutcomes"]): { most: number; latestFailed: boolean } {
  const ordered = [...outcomes].sort((a, b) => (after(a, b) ? 1 : after(b, a) ? -1 : 0));
  let failures = 0;
  let most = 0;
  for (const outcome of ordered) {
    if (outcome.failed) most = Math.max(most, ++failures);
    else [most, failures] = [failures > 0 ? Math.max(most, failures + 1) : most, 0];
  }
  return { most, latestFailed: ordered.at(-1)?.failed === true };
}

/** What is known of a call or tool use once `part` is added to what was: a value once known stays, a later one wins (but a guess never replaces a known error). */
export function mergePart(known: Part | undefined, part: Part): Part {
  const keptError =
    known && guessed(part.fields.error) && typeof known.fields.error === "string" && !guessed(known.fields.error) ? { error: known.fields.error } : {};
  const merged = known ? { kind: part.kind, id: part.id, at: Math.max(known.at, part.at), fields: { ...known.fields, ...part.fields, ...keptError } } : part;
  return merged.kind === "call" ? priced(merged) : merged;
}

/**
 * A call with the cost the client said, else its estimate at list prices: a failed call that said
 * no tokens was not billed ($0); one the table cannot price has neither, and is counted unpriced,
 * never as $0.
 */
/** A failed attempt that said no tokens was not billed (a refusal: a 529, a 503), unless it stopped mid-answer. */
const knownFree = (fields: PartFields) =>
  fields.success === false && fields.inputTokens === undefined && fields.outputTokens === undefined && !stoppedMidAnswer(fields.error);

function priced(part: Part): Part {
  const { estimatedCostUsd: _estimate, ...fields } = part.fields;
  if (fields.costUsd !== undefined) return _estimate === undefined ? part : { ...part, fields };
  const estimate = estimateCostUsd(fields) ?? (knownFree(fields) ? 0 : null);
  return { ...part, fields: estimate === null ? fields : { ...fields, estimatedCostUsd: estimate } };
}

/**
 * The calls that take their lifecycle's model (`modelOfLifecycle`) and name none yet, given it now
 * that it is known, priced again: each one changed, also set in the tally. Called before a
 * lifecycle is summed up, so the order the model and the calls arrive in does not matter.
 */
export function modelsFilled(tally: Tally): Part[] {
  const model = tally.model?.value;
  if (model === undefined) return [];
  const filled: Part[] = [];
  for (const [key, part] of tally.parts) {
    if (part.kind !== "call" || !part.fields.modelOfLifecycle || part.fields.model !== undefined) continue;
    const merged = mergePart(part, { ...part, fields: { model } });
    tally.parts.set(key, merged);
    filled.push(merged);
  }
  return filled;
}

export const partKey = (part: Pick<Part, "kind" | "id">) => `${part.kind} ${part.id}`;

/**
 * One agent's calls and tools told by both its intakes, each once. Codex's and Gemini CLI's files
 * name a call by its response or its message (Gemini's a tool by its call id), their telemetry by a
 * span or an event: no id both carry. Such a client makes one call at a time in a turn, and each
 * intake tells its calls (and each tool's uses) in the order they ended, so the n-th one told is the
 * n-th the other told: each pair is one, named as the files name it, each field from the intake that
 * says it (the telemetry's where both do). Returns the parts with those joined, and the key
 * (`call <id>`, `tool <id>`) of each telemetry part that became a files' one.
 */
export function joinedParts(parts: readonly Part[]): { parts: Part[]; renamed: Map<string, string> } {
  const renamed = new Map<string, string>();
  const joined = new Map<Part, Part>();
  const dropped = new Set<Part>();
  const groups = new Map<string, { files: Part[]; telemetry: Part[] }>();
  for (const part of parts) {
    const by = part.fields.toldBy;
    if (by === undefined) continue;
    // A call is paired with a call; a tool use with a use of the same tool.
    const group = `${part.kind} ${part.kind === "tool" ? (part.fields.name ?? "") : ""}`;
    const told = groups.get(group) ?? groups.set(group, { files: [], telemetry: [] }).get(group)!;
    told[by].push(part);
  }
  const inOrder = (a: Part, b: Part) => a.at - b.at || (a.id < b.id ? -1 : 1);
  for (const { files, telemetry } of groups.values()) {
    files.sort(inOrder);
    telemetry.sort(inOrder);
    for (let i = 0; i < Math.min(files.length, telemetry.length); i++) {
      const [file, received] = [files[i]!, telemetry[i]!];
      joined.set(file, mergePart(file, { ...received, id: file.id }));
      dropped.add(received);
      renamed.set(partKey(received), partKey(file));
    }
  }
  return { parts: parts.filter((part) => !dropped.has(part)).map((part) => joined.get(part) ?? part), renamed };
}

/**
 * What a lifecycle is now, from its tally. The state follows from the facts, not the order they
 * came in: a definite end says completed or failed (a turn that had no answer, gave up retrying
 * after its last answer, or whose latest attempt failed, failed); without one, a give-up is a failure, an answer that is the latest
 * thing seen is a completion (a turn seen through its log events alone), one back in its queue
 * since its latest attempt began is queued, and anything else is processing, queued or created,
 * as far as it got.
 */
export function summarize(tally: Tally): Folded {
  const { kind, end, succeededAt } = tally;
  const firstAt = tally.firstAt ?? 0;
  const lastAt = tally.lastAt ?? firstAt;
  const exhaustedAt = tally.exhausted?.at ?? null;
  const gaveUp = exhaustedAt !== null && (succeededAt === null || exhaustedAt > succeededAt);
  const outcomes = attemptsOf(tally.attemptOutcomes);
  let state: State;
  let finishedAt: number | null = null;
  if (end) {
    finishedAt = end.endedAt;
    state = end.failed || gaveUp || outcomes.latestFailed || (kind === "turn" && succeededAt === null) ? "failed" : "completed";
  } else if (gaveUp) {
    [state, finishedAt] = ["failed", exhaustedAt];
  } else if (tally.answeredAt !== null && tally.answeredAt >= lastAt) {
    [state, finishedAt] = ["completed", tally.answeredAt];
  } else {
    // Back in its queue after an attempt, and no attempt begun since: it waits for its next one.
    const waiting = tally.requeuedAt !== null && (tally.latestProcessingAt === null || tally.requeuedAt >= tally.latestProcessingAt);
    state = waiting ? "queued" : tally.processingAt !== null ? "processing" : tally.queuedAt !== null ? "queued" : "created";
  }
  // In the order of their ids, so a sum of costs comes out the same to the last bit however they arrived.
  const parts = [...tally.parts.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const joined = joinedParts(parts).parts;
  const calls = toldOnce(joined.filter((part) => part.kind === "call"));
  const sum = (field: keyof PartFields) => calls.reduce((total, part) => total + ((part.fields[field] as number | undefined) ?? 0), 0);
  const tries = triesOf(calls);
  // An agent's run that ended well on its own word but whose last model call failed did not get its answer.
  const lastCall = [...calls].sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1)).at(-1);
  if (state === "completed" && kind === "agent" && lastCall?.fields.success === false) state = "failed";
  const gaveUpWith = gaveUp ? tally.exhausted!.value : undefined;
  // The error the end said (an agent's run: its own, over its last call's), else the latest.
  const error =
    state === "completed"
      ? null
      : (gaveUpWith ??
        (end?.failed ? end.error : undefined) ??
        tally.error?.value ??
        tally.unsaidError?.value ??
        (state === "failed" && kind === "turn" && succeededAt === null ? "the turn ended before any answer (interrupted?)" : null));
  const attempts = [
    ...(tally.attempt === null ? [] : [tally.attempt]),
    ...calls.map((part) => part.fields.attempt ?? 0),
    outcomes.most,
    ...tries.filter((count) => count > 1),
  ];
  return {
    state,
    startedAt: least(tally.startedAt, firstAt) ?? firstAt,
    queuedAt: tally.queuedAt,
    processingAt: tally.processingAt,
    finishedAt,
    firstAt,
    lastAt,
    prompt: tally.prompt?.value ?? null,
    output: tally.output?.value ?? null,
    error,
    model:
      tally.model?.value ??
      calls
        .map((part) => part.fields.model)
        .filter(Boolean)
        .at(-1) ??
      null,
    attempt: (attempts.length ? Math.max(...attempts) : null) || null,
    lastStep: tally.last?.value ?? "",
    waitingOn: tally.waitingOn?.value || null,
    abandonedBy: tally.abandonedBy?.value ?? null,
    abandonedAt: tally.abandonedBy?.at ?? null,
    calls: tries.length,
    tools: joined.filter((part) => part.kind === "tool").length,
    inputTokens: sum("inputTokens"),
    outputTokens: sum("outputTokens"),
    cacheReadTokens: sum("cacheReadTokens"),
    cacheWriteTokens: sum("cacheWriteTokens"),
    costUsd: Math.round(calls.reduce((total, part) => total + (part.fields.costUsd ?? part.fields.estimatedCostUsd ?? 0), 0) * 1e6) / 1e6,
    ...costCounts(calls, tries.length),
  };
}

/**
 * Of `count` calls, those whose cost is estimated and those with none. A failed attempt that said
 * no tokens cost nothing, as its provider bills it: a known $0, counted as neither; unless it stopped
 * mid-answer (aborted, cut off), when what it cost is not known.
 */
function costCounts(calls: readonly Part[], count: number): { estimatedCalls: number; unpricedCalls: number } {
  const billed = calls.filter(({ fields }) => fields.costUsd === undefined && !knownFree(fields));
  const estimated = billed.filter((part) => part.fields.estimatedCostUsd !== undefined).length;
  const unpriced = billed.length - estimated;
  return { estimatedCalls: Math.min(estimated, count), unpricedCalls: Math.min(unpriced, count) };
}

/**
 * Each call once: one told by a span inside another call's span is that call, told again by a
 * second instrumentation; what it adds (cache tokens, attempts) fills what the outer did not say.
 */
function toldOnce(calls: readonly Part[]): Part[] {
  const bySpan = new Map(calls.filter((call) => call.fields.spanId !== undefined).map((call) => [call.fields.spanId!, call]));
  const outer = new Map<string, Part>();
  const kept: Part[] = [];
  for (const call of calls) {
    const holder = call.fields.parentSpanId === undefined ? undefined : bySpan.get(call.fields.parentSpanId);
    if (holder) outer.set(holder.fields.spanId!, { ...holder, fields: { ...call.fields, ...(outer.get(holder.fields.spanId!) ?? holder).fields } });
    else kept.push(call);
  }
  return kept.map((call) => (call.fields.spanId !== undefined && outer.get(call.fields.spanId)) || call);
}

/**
 * The calls as the user made them, each with how many tries it took: calls that say the same
 * `attemptsOf`, in the order they ended, where each failed one is followed by its next try; a call
 * that says none is one call.
 */
function triesOf(calls: readonly Part[]): number[] {
  const tries: number[] = [];
  const groups = new Map<string, Part[]>();
  for (const call of calls) {
    const group = call.fields.attemptsOf;
    if (group === undefined) tries.push(1);
    else groups.set(group, [...(groups.get(group) ?? []), call]);
  }
  for (const group of groups.values()) {
    let count = 0;
    const ordered = group.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
    ordered.forEach((call, i) => {
      count += 1;
      if (call.fields.success !== false || i === ordered.length - 1) {
        tries.push(count);
        count = 0;
      }
    });
  }
  return tries;
}
