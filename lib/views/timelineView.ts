import { formatDuration } from "../model/duration";
import { formatUsd } from "../model/money";
import type { SourcePart, SourceStep } from "../sources/sourceMessage";

/**
 * A received lifecycle drawn as a trace viewer draws one (Jaeger, Phoenix, Langfuse): each model
 * call and tool use once, as one bar merged from every record that told of it (Claude Code reports
 * a call by its api_request event and its llm_request span, a tool by its decision, its result and
 * its span); each other step that took time (a turn, a wait) a bar of its own, and each instant
 * (a prompt, a give-up) a tick; all on one time axis, nested under the step they happened inside.
 */
export interface Timeline {
  startAt: number;
  endAt: number;
  /** The roots, each with what happened inside it, by start. */
  items: TimelineItem[];
  /** Marks along the axis: where (percent of its width) and the time since the start there. */
  ticks: { offset: number; label: string }[];
}

export interface TimelineItem {
  key: string;
  kind: "call" | "tool" | "step";
  /** What it is: `model call`, `tool`, or the step's own name (`turn ended`, `waited for permission`, `user_prompt`). */
  label: string;
  /** The model or the tool. */
  name: string | null;
  /** A call made for something other than the agent's own work, as its client names it (Gemini CLI's `router`, which picks the model); null for the agent's own. */
  role: string | null;
  startAt: number;
  endAt: number;
  /** Null for an instant, drawn as a tick. */
  durationMs: number | null;
  /** Where its bar begins and how wide it is, in percent of the axis. */
  offset: number;
  width: number;
  /** Its error's text, or `failed` where the client said it failed and not why. */
  error: string | null;
  /** The slowest of the lifecycle's calls and tools. */
  slowest: boolean;
  /** How many times a call was tried, when more than once. */
  attempts: number | null;
  /** Which try of one call this bar is, when its client told each try by a span of its own (the AI SDK 6): `2 of 3`. */
  attemptOf: string | null;
  /** One line: what a call used, or what the step said. */
  summary: string;
  /** Each record that told of it, oldest first. */
  records: { name: string; summary: string }[];
  /** How a screen reader and a test name it: `model call, claude-sonnet-4-5, 1.2 s`. */
  title: string;
  children: TimelineItem[];
}

/** The error of what failed without saying why. */
const FAILED = "failed";

/** A duration the way a timeline labels it: `95 ms`, `1.2 s`, `3m 5s`. */
export function formatSpan(ms: number): string {
  if (ms < 1000) return `${Math.round(Math.max(0, ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return formatDuration(ms);
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/**
 * The part a step tells of: the one the store says it told of; else (a step kept before the store
 * said) by the call's request id or the tool's use id its detail carries, or the span or record
 * the part was named after.
 */
function partKeyOf(step: SourceStep, parts: ReadonlyMap<string, SourcePart>): string | null {
  const candidates = [step.partKey ?? "", `tool ${text(step.detail.tool_use_id) ?? ""}`, `call ${text(step.detail.request_id) ?? ""}`];
  if (step.key) candidates.push(`call ${step.key}`, `tool ${step.key}`);
  const span = step.key?.startsWith("span:") ? step.key.slice(5) : undefined;
  if (span) candidates.push(`call ${span}`, `call span-${span}`, `tool ${span}`, `tool span-${span}`);
  return candidates.find((key) => parts.has(key)) ?? null;
}

/** What a call used, in one line. */
function callSummary(fields: Record<string, unknown>): string {
  const input = count(fields.inputTokens);
  const output = count(fields.outputTokens);
  const cacheRead = count(fields.cacheReadTokens) ?? 0;
  const cacheWrite = count(fields.cacheWriteTokens) ?? 0;
  const cost = count(fields.costUsd);
  const estimate = count(fields.estimatedCostUsd);
  const ttft = count(fields.ttftMs);
  const attempt = count(fields.attempt);
  return [
    (input !== undefined || output !== undefined) && `${input ?? 0} in / ${output ?? 0} out tokens`,
    cacheRead > 0 && `cache read ${cacheRead}`,
    cacheWrite > 0 && `cache write ${cacheWrite}`,
    // A failed call that said no tokens is counted as $0 (mapping/fold.ts); "$0 estimated" beside its error would read as a price.
    cost !== undefined
      ? formatUsd(cost)
      : estimate !== undefined &&
        !(estimate === 0 && fields.success === false && input === undefined && output === undefined) &&
        `${formatUsd(estimate)} estimated`,
    ttft !== undefined && `first token ${formatSpan(ttft)}`,
    attempt !== undefined && attempt > 1 && `${attempt} attempts`,
  ]
    .filter(Boolean)
    .join(", ");
}

interface Group {
  key: string;
  part: SourcePart | null;
  steps: SourceStep[];
}

/** The lifecycle's steps and parts on one time axis; null when there is nothing to draw. */
export function timelineOf(steps: readonly SourceStep[], parts: readonly SourcePart[]): Timeline | null {
  const partsByKey = new Map(parts.map((part) => [`${part.kind} ${part.id}`, part]));
  const groups = new Map<string, Group>();
  /** Each step's key to the item it is drawn in. */
  const itemOfStep = new Map<string, string>();
  for (const part of parts) groups.set(`${part.kind} ${part.id}`, { key: `${part.kind} ${part.id}`, part, steps: [] });
  steps.forEach((step, i) => {
    const stepKey = step.key ?? `step ${i}`;
    const key = partKeyOf(step, partsByKey) ?? stepKey;
    const group = groups.get(key) ?? groups.set(key, { key, part: null, steps: [] }).get(key)!;
    group.steps.push(step);
    itemOfStep.set(stepKey, key);
  });
  if (!groups.size) return null;
  foldCallsToldTwice(groups, itemOfStep);
  foldSpansIntoParts(groups, itemOfStep);
  foldToolSpansIntoTools(groups, itemOfStep);
  foldAttemptsIntoCalls(groups, itemOfStep);

  const items = new Map<string, TimelineItem>();
  /** Each item's parent item, by key. */
  const parents = new Map<string, string>();
  for (const group of groups.values()) {
    const { item, parentKey } = itemOf(group, itemOfStep);
    items.set(group.key, item);
    if (parentKey !== null && parentKey !== group.key) parents.set(group.key, parentKey);
  }
  numberTries(groups, items);
  const all = [...items.values()];
  const startAt = Math.min(...all.map((item) => item.startAt));
  const endAt = Math.max(...all.map((item) => item.endAt));
  const axis = Math.max(endAt - startAt, 1);

  // Nest each item under the item its parent step is drawn in; one that would nest in itself or its own child stays a root.
  const roots: TimelineItem[] = [];
  for (const item of all) {
    const parentKey = parents.get(item.key);
    const parent = parentKey === undefined ? undefined : items.get(parentKey);
    if (parent && !holds(item.key, parent.key, parents)) parent.children.push(item);
    else roots.push(item);
  }
  // One root that holds the rest (a turn's own span: the only one with anything nested, or the only step, not a call or tool, whose time spans all the others'): what was told without a parent, inside its time, happened in it.
  const holders = roots.filter((item) => item.children.length > 0);
  const spanning = roots.filter(
    (item) => item.kind === "step" && item.durationMs !== null && roots.every((other) => other.startAt >= item.startAt && other.endAt <= item.endAt),
  );
  const top = holders.length === 1 ? holders[0]! : holders.length === 0 && spanning.length === 1 ? spanning[0]! : null;
  const shown = top ? roots.filter((item) => item === top || !(item.startAt >= top.startAt && item.endAt <= top.endAt)) : roots;
  if (top) top.children.push(...roots.filter((item) => !shown.includes(item)));

  // The slowest of the calls and tools, when there are two or more to compare.
  const timed = all.filter((item) => item.kind !== "step" && item.durationMs !== null);
  const slowest = timed.length > 1 ? timed.reduce((a, b) => (b.durationMs! > a.durationMs! ? b : a)) : null;
  if (slowest && slowest.durationMs! > 0) {
    slowest.slowest = true;
    slowest.title += ", the slowest";
  }

  const place = (list: TimelineItem[]): TimelineItem[] =>
    list
      .sort((a, b) => a.startAt - b.startAt || a.endAt - b.endAt || (a.key < b.key ? -1 : 1))
      .map((item) => ({
        ...item,
        offset: ((item.startAt - startAt) / axis) * 100,
        width: ((item.endAt - item.startAt) / axis) * 100,
        children: place(item.children),
      }));
  return {
    startAt,
    endAt,
    items: place(shown),
    ticks: [0, 0.25, 0.5, 0.75, 1].map((share) => ({ offset: share * 100, label: share === 0 ? "0" : formatSpan(share * (endAt - startAt)) })),
  };
}

/**
 * A call told by a span inside another call's span (the Anthropic SDK's own span inside
 * OpenInference's) is that call told again, as the sums count it (mapping/fold.ts): one bar, the
 * outer's, with what the inner adds (its attempts) where the outer said nothing.
 */
function foldCallsToldTwice(groups: Map<string, Group>, itemOfStep: Map<string, string>): void {
  const bySpan = new Map(
    [...groups.values()]
      .filter((group) => group.part?.kind === "call" && text(group.part.fields.spanId))
      .map((group) => [text(group.part!.fields.spanId)!, group]),
  );
  for (const inner of [...groups.values()]) {
    const outer = inner.part?.kind === "call" ? bySpan.get(text(inner.part.fields.parentSpanId) ?? "") : undefined;
    if (!outer || outer === inner || !groups.has(outer.key)) continue;
    outer.part = { ...outer.part!, fields: { ...inner.part!.fields, ...outer.part!.fields } };
    outer.steps.push(...inner.steps);
    outer.steps.sort((a, b) => (a.startAt ?? a.at) - (b.startAt ?? b.at));
    for (const [step, item] of itemOfStep) if (item === inner.key) itemOfStep.set(step, outer.key);
    groups.delete(inner.key);
  }
}

/**
 * A step its client named as a model call (or as `tool <name>`) that has no part of its own is that
 * part's own span when it holds exactly one part of that kind, or, holding none, when exactly one
 * part that ran inside nothing lies within its time with its model: drawn as one bar with it. A
 * client that names a call by the record that answered it (Gemini CLI names it by its api_response
 * event, which its llm_call span holds, or not) would otherwise show each call twice.
 */
function foldSpansIntoParts(groups: Map<string, Group>, itemOfStep: Map<string, string>): void {
  const held = new Map<string, Group[]>();
  const loose: Group[] = [];
  for (const group of groups.values()) {
    if (!group.part) continue;
    const holders = new Set(
      group.steps
        .map((step) => (step.parentKey === undefined ? undefined : itemOfStep.get(step.parentKey)))
        .filter((key): key is string => key !== undefined && key !== group.key),
    );
    for (const holder of holders) held.set(holder, [...(held.get(holder) ?? []), group]);
    if (!holders.size) loose.push(group);
  }
  const spans = [...groups.values()].filter((group) => !group.part && group.steps.length === 1 && group.steps[0]!.startAt !== undefined);
  for (const holder of spans) {
    const span = holder.steps[0]!;
    const named = (part: SourcePart) => (part.kind === "call" ? span.name === "model call" : span.name === `tool ${text(part.fields.name) ?? ""}`);
    const inner = (held.get(holder.key) ?? []).filter((group) => named(group.part!));
    const within = (group: Group) =>
      group.steps.every((step) => (step.startAt ?? step.at) >= span.startAt! && step.at <= span.at) &&
      text(span.detail.model) === text(group.part!.fields.model);
    const candidates = held.has(holder.key)
      ? inner
      : loose.filter((group) => group.part!.kind === "call" && named(group.part!) && group.steps.length > 0 && within(group));
    if (candidates.length !== 1 || (held.get(holder.key)?.length ?? 0) > 1) continue;
    const only = candidates[0]!;
    only.steps.unshift(span);
    for (const [step, item] of itemOfStep) if (item === holder.key) itemOfStep.set(step, only.key);
    groups.delete(holder.key);
    if (loose.includes(only)) loose.splice(loose.indexOf(only), 1);
  }
}

/** Move a group's steps into another's (drawn as one bar with it) and forget it. */
function moveInto(from: Group, into: Group, groups: Map<string, Group>, itemOfStep: Map<string, string>): void {
  into.steps.push(...from.steps);
  into.steps.sort((a, b) => (a.startAt ?? a.at) - (b.startAt ?? b.at) || a.at - b.at);
  for (const [step, item] of itemOfStep) if (item === from.key) itemOfStep.set(step, into.key);
  groups.delete(from.key);
}

/** When a group's steps began and ended. */
/** A tool's span and its log event are written apart by the client: on a busy machine, the event some milliseconds after the span ended. */
const TOOL_RECORDS_APART_MS = 1000;

const timesOf = (group: Group) => ({
  startAt: Math.min(...group.steps.map((step) => step.startAt ?? step.at)),
  endAt: Math.max(...group.steps.map((step) => step.at)),
});

/**
 * A tool's span that names no call id beside the tool's event (Gemini CLI's `tool_call` span and
 * its `tool_call` log event, both inside the batch's `schedule_tool_calls` span) is that tool when
 * the two are each other's only nearest match: the same tool, inside the same span, the nearest in
 * time (overlapping, or within TOOL_RECORDS_APART_MS). Two tools of one name in one batch whose
 * times overlap every way stay apart: nothing either record carries says which is which.
 */
function foldToolSpansIntoTools(groups: Map<string, Group>, itemOfStep: Map<string, string>): void {
  const spans = [...groups.values()].filter(
    (group) =>
      !group.part &&
      group.steps.length === 1 &&
      group.steps[0]!.startAt !== undefined &&
      group.steps[0]!.name.startsWith("tool ") &&
      group.steps[0]!.parentKey !== undefined,
  );
  const tools = [...groups.values()].filter(
    (group) => group.part?.kind === "tool" && group.steps.length > 0 && !group.steps.some((step) => step.key?.startsWith("span:")),
  );
  // How far apart two records' times are (0: they overlap), or null when they cannot be one tool.
  const gap = (span: Group, tool: Group): number | null => {
    const step = span.steps[0]!;
    if (step.name !== `tool ${text(tool.part!.fields.name) ?? ""}` || !tool.steps.every((told) => told.parentKey === step.parentKey)) return null;
    const [a, b] = [timesOf(span), timesOf(tool)];
    const apart = Math.max(0, a.startAt - b.endAt, b.startAt - a.endAt);
    return apart <= TOOL_RECORDS_APART_MS ? apart : null;
  };
  // The one record nearest to `from` among `others`, if no other is as near.
  const nearest = <T extends Group>(from: Group, others: T[], gapOf: (other: T) => number | null): T | null => {
    const near = others.map((other) => ({ other, apart: gapOf(other) })).filter((pair): pair is { other: T; apart: number } => pair.apart !== null);
    const least = Math.min(...near.map((pair) => pair.apart));
    const at = near.filter((pair) => pair.apart === least);
    return at.length === 1 ? at[0]!.other : null;
  };
  // Paired first, then merged: a merge changes the times the pairing reads.
  const pairs = spans.flatMap((span) => {
    const tool = nearest(span, tools, (other) => gap(span, other));
    return tool && nearest(tool, spans, (other) => gap(other, tool)) === span ? [[span, tool] as const] : [];
  });
  for (const [span, tool] of pairs) moveInto(span, tool, groups, itemOfStep);
}

/**
 * A client that makes one model call at a time in a lifecycle and tells each HTTP attempt apart
 * from its answer (Codex: a `codex.api_request` event per attempt, numbered, and the answer's
 * `handle_responses` span): the attempts since the previous answer are this answer's call, drawn
 * as one bar with it, when they are numbered from the first and only the last was answered.
 * Anything else (an answer's span lost, two answered attempts between two answers) stays apart.
 */
function foldAttemptsIntoCalls(groups: Map<string, Group>, itemOfStep: Map<string, string>): void {
  const attempts = [...groups.values()]
    .filter((group) => !group.part && group.steps.length === 1 && group.steps[0]!.detail.attempt_of_next_answer === true)
    .sort((a, b) => a.steps[0]!.at - b.steps[0]!.at);
  if (!attempts.length) return;
  const calls = [...groups.values()].filter((group) => group.part?.kind === "call").sort((a, b) => timesOf(a).endAt - timesOf(b).endAt);
  let after = -Infinity;
  for (const call of calls) {
    const endAt = timesOf(call).endAt;
    const mine = attempts.filter((group) => group.steps[0]!.at > after && group.steps[0]!.at <= endAt);
    after = endAt;
    const numbers = mine.map((group) => count(group.steps[0]!.detail.attempt));
    const answered = mine.map((group) => group.steps[0]!.error === undefined || group.steps[0]!.error === null);
    if (!mine.length || numbers.some((number, i) => number !== i + 1) || answered.some((ok, i) => ok !== (i === mine.length - 1))) continue;
    for (const group of mine) moveInto(group, call, groups, itemOfStep);
  }
}

/**
 * The tries of one call, each told by a span of its own (calls that say the same `attemptsOf`, in
 * the order they ended, each failed one followed by the next try, as mapping/fold.ts counts them
 * one call): each bar says which try it was, so three bars are not read as three calls.
 */
function numberTries(groups: ReadonlyMap<string, Group>, items: ReadonlyMap<string, TimelineItem>): void {
  const byCall = new Map<string, Group[]>();
  for (const group of groups.values()) {
    const of = group.part?.kind === "call" ? text(group.part.fields.attemptsOf) : undefined;
    if (of !== undefined) byCall.set(of, [...(byCall.get(of) ?? []), group]);
  }
  for (const tries of byCall.values()) {
    const ordered = tries.sort((a, b) => a.part!.at - b.part!.at || (a.part!.id < b.part!.id ? -1 : 1));
    let run: TimelineItem[] = [];
    ordered.forEach((group, i) => {
      run.push(items.get(group.key)!);
      if (group.part!.fields.success === false && i < ordered.length - 1) return;
      if (run.length > 1)
        run.forEach((item, n) => {
          item.attemptOf = `${n + 1} of ${run.length}`;
          const took = item.durationMs === null ? "instant" : formatSpan(item.durationMs);
          item.title = item.title.replace(`, ${took}`, `, ${took}, attempt ${item.attemptOf}`);
        });
      run = [];
    });
  }
}

/** Whether `key` is `inner` or one of the items it is nested in, however deep: nesting `key` in `inner` would make a loop. */
function holds(key: string, inner: string, parents: ReadonlyMap<string, string>): boolean {
  const seen = new Set<string>();
  for (let at: string | undefined = inner; at !== undefined && !seen.has(at); at = parents.get(at)) {
    if (at === key) return true;
    seen.add(at);
  }
  return false;
}

function itemOf(group: Group, itemOfStep: ReadonlyMap<string, string>): { item: TimelineItem; parentKey: string | null } {
  const { part, steps } = group;
  const fields = part?.fields ?? {};
  const duration = count(fields.durationMs);
  const endAt = steps.length ? Math.max(...steps.map((step) => step.at)) : part!.at;
  // From the first record of it: a tool's decision comes before the tool runs.
  const begun = steps.map((step) => step.startAt ?? step.at);
  const startAt = steps.some((step) => step.startAt !== undefined) || duration === undefined ? Math.min(...begun, endAt) : endAt - duration;
  const took = endAt - startAt;
  // A span says what it ran inside; a log record of the same call does not.
  // The first step of it that ran inside another item names its parent (a span of it may hold the others).
  const parentKey =
    steps.map((step) => (step.parentKey === undefined ? undefined : itemOfStep.get(step.parentKey))).find((key) => key !== undefined && key !== group.key) ??
    null;
  // What the store kept as the step's error, a span's error status, or a step its client marked failed (a retried attempt).
  const stepError = steps
    .map((step) => step.error ?? text(step.detail.status) ?? (step.detail.failed === true ? (text(step.detail.error) ?? FAILED) : undefined))
    .find((error) => error !== undefined);
  const error = part ? (fields.success === false ? (text(fields.error) ?? stepError ?? FAILED) : null) : (stepError ?? null);
  const kind = part?.kind ?? "step";
  const label = part ? (part.kind === "call" ? "model call" : "tool") : steps[0]!.name;
  const name = part ? (text(part.kind === "call" ? fields.model : fields.name) ?? null) : null;
  const span = steps.find((step) => step.key?.startsWith("span:"));
  const summary = kind === "call" ? callSummary(fields) : kind === "tool" ? ((span ?? steps.at(-1))?.summary ?? "") : steps[0]!.summary;
  const durationMs = took > 0 ? took : null;
  // The attempts its part says, or that its records number (Codex's attempts, drawn in their answer's bar).
  const attempts =
    kind === "call"
      ? Math.max(count(fields.attempt) ?? 0, ...steps.map((step) => (step.detail.attempt_of_next_answer === true ? (count(step.detail.attempt) ?? 0) : 0)))
      : 0;
  // Gemini CLI names each call's role: `main` is the agent's own, shown as any other call.
  const role = kind === "call" && text(fields.name) !== "main" ? (text(fields.name) ?? null) : null;
  const title = [
    label,
    name,
    role,
    durationMs === null ? "instant" : formatSpan(durationMs),
    attempts > 1 && `${attempts} attempts`,
    error && (error === FAILED ? FAILED : `failed: ${error}`),
  ]
    .filter(Boolean)
    .join(", ");
  const item: TimelineItem = {
    key: group.key,
    kind,
    label,
    name,
    role,
    startAt,
    endAt,
    durationMs,
    offset: 0,
    width: 0,
    error,
    slowest: false,
    attempts: attempts > 1 ? attempts : null,
    attemptOf: null,
    summary,
    records: steps.map((step) => ({ name: step.name, summary: step.summary })),
    title,
    children: [],
  };
  return { item, parentKey };
}
