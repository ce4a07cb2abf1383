import type { State } from "../../model/states";
import type { Facts, LifecycleKind, Part } from "./changes";

/** A lifecycle as its steps and parts add up: what the store keeps in its row and the pages show. */
export interface Folded {
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
  calls: number;
  tools: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
}

export interface FoldStep {
  at: number;
  name: string;
  summary: string;
  facts: Facts;
}

const latest = <T>(steps: readonly FoldStep[], pick: (facts: Facts) => T | undefined): T | undefined => {
  for (let i = steps.length - 1; i >= 0; i--) {
    const value = pick(steps[i]!.facts);
    if (value !== undefined) return value;
  }
  return undefined;
};

/**
 * Fold a lifecycle's steps (in any order) and parts into what it is now. The state follows from
 * the facts, not the order they came in: a definite end says completed or failed (a turn that had
 * no answer, or gave up retrying after its last answer, failed); without one, a give-up is a
 * failure, an answer that is the latest thing seen is a completion (a turn seen through its log
 * events alone), and anything else is processing, queued or created, as far as it got.
 */
export function foldLifecycle(kind: LifecycleKind, unordered: readonly FoldStep[], parts: readonly Part[]): Folded {
  const steps = [...unordered].sort((a, b) => a.at - b.at);
  const times = (pick: (facts: Facts) => number | undefined) => steps.map((step) => pick(step.facts)).filter((t): t is number => t !== undefined);
  const min = (values: number[]) => (values.length ? Math.min(...values) : null);
  const max = (values: number[]) => (values.length ? Math.max(...values) : null);
  const firstAt = steps[0]?.at ?? 0;
  const lastAt = steps.at(-1)?.at ?? firstAt;
  const startedAt = min([...times((f) => f.startedAt), firstAt]) ?? firstAt;
  const ends = steps.filter((step) => step.facts.endedAt !== undefined).sort((a, b) => a.facts.endedAt! - b.facts.endedAt!);
  const end = ends.at(-1);
  const succeededAt = max(steps.filter((step) => step.facts.succeeded).map((step) => step.at));
  const exhaustedAt = max(steps.filter((step) => step.facts.exhausted).map((step) => step.at));
  const gaveUp = exhaustedAt !== null && (succeededAt === null || exhaustedAt > succeededAt);
  const answeredAt = max(times((f) => f.answeredAt));
  let state: State;
  let finishedAt: number | null = null;
  if (end) {
    finishedAt = end.facts.endedAt!;
    state = end.facts.failed || gaveUp || (kind === "turn" && succeededAt === null) ? "failed" : "completed";
  } else if (gaveUp) {
    [state, finishedAt] = ["failed", exhaustedAt];
  } else if (answeredAt !== null && answeredAt >= lastAt) {
    [state, finishedAt] = ["completed", answeredAt];
  } else {
    state = min(times((f) => f.processingAt)) !== null ? "processing" : min(times((f) => f.queuedAt)) !== null ? "queued" : "created";
  }
  const calls = parts.filter((part) => part.kind === "call");
  const sum = (pick: (part: Part) => number | undefined) => calls.reduce((total, part) => total + (pick(part) ?? 0), 0);
  const lastStep = steps.at(-1);
  const gaveUpWith = gaveUp ? steps.filter((step) => step.facts.exhausted).at(-1)?.facts.error : undefined;
  const error = state === "completed" ? null : (gaveUpWith ?? latest(steps, (f) => f.error) ?? (state === "failed" && kind === "turn" && succeededAt === null ? "the turn ended before any answer (interrupted?)" : null));
  return {
    state,
    startedAt,
    queuedAt: min(times((f) => f.queuedAt)),
    processingAt: min(times((f) => f.processingAt)),
    finishedAt,
    firstAt,
    lastAt,
    prompt: steps.find((step) => step.facts.prompt !== undefined)?.facts.prompt ?? null,
    output: latest(steps, (f) => f.output) ?? null,
    error,
    model: latest(steps, (f) => f.model) ?? calls.map((part) => part.fields.model).filter(Boolean).at(-1) ?? null,
    attempt: max([...times((f) => f.attempt), ...calls.map((part) => part.fields.attempt ?? 0)]) || null,
    lastStep: lastStep ? `${lastStep.name}${lastStep.summary ? `: ${lastStep.summary}` : ""}` : "",
    calls: calls.length,
    tools: parts.filter((part) => part.kind === "tool").length,
    inputTokens: sum((part) => part.fields.inputTokens),
    outputTokens: sum((part) => part.fields.outputTokens),
    cacheReadTokens: sum((part) => part.fields.cacheReadTokens),
    cacheWriteTokens: sum((part) => part.fields.cacheWriteTokens),
    costUsd: Math.round(sum((part) => part.fields.costUsd) * 1e6) / 1e6,
  };
}
