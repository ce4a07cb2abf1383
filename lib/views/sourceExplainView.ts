import { escapeControls } from "../model/displayText";
import { formatDuration } from "../model/duration";
import { stateEnteredAt } from "../model/transition";
import type { State } from "../model/states";
import { lifecycleSegments, timeInStates } from "./lifecycle";
import type { SourceRequestView } from "./sourceRowsView";
import { isFileStep } from "../telemetry/agentFiles/agentFiles";

/** A source row's story (a received turn or call, another program's job): what its page shows, in words. */
interface SourceExplanation {
  requestId: string;
  source: string;
  state: State;
  stateSince: number;
  timeInStates: Partial<Record<State, number>>;
  stuckReason: string | null;
  note: string | null;
  /** Its steps as its page lists them (model calls, tools, errors), oldest first; null where the source keeps none. */
  steps: SourceRequestView["steps"];
  lines: string[];
}

/** Where a kept lifecycle came from, by its steps: received over OpenTelemetry, read from the agent's own files, or both. */
function toldBy(steps: NonNullable<SourceRequestView["steps"]>): string {
  const files = steps.some((step) => step.key !== undefined && isFileStep(step.key));
  const received = steps.some((step) => step.key !== undefined && !isFileStep(step.key));
  return files && received
    ? "received over OpenTelemetry and read from the agent's own files"
    : files
      ? "read from the agent's own files"
      : "received over OpenTelemetry";
}

/** The steps put in lines: the newest this many (an agent's turn of hundreds of tool uses stays readable). */
const STEP_LINES = 50;

export function explainSourceRequest(view: SourceRequestView, now: number): SourceExplanation {
  const { request, source } = view;
  const stateSince = stateEnteredAt(request);
  const spent = timeInStates(lifecycleSegments(request, now));
  const from = source.kind === "otel" ? toldBy(view.steps ?? []) : `in ${source.kind} ${source.name}, read-only`;
  const lines = [
    `${request.requestId} (${from}, ${escapeControls(request.workspace)}${request.sessionId ? `, session ${request.sessionId}` : ""}) is ${request.state}, for ${formatDuration(Math.max(0, now - stateSince))}; started ${formatDuration(Math.max(0, now - request.createdAt))} ago.`,
    `  Time in each state: ${
      Object.entries(spent)
        .map(([state, ms]) => `${state} ${formatDuration(ms)}`)
        .join(", ") || "none yet"
    }.`,
  ];
  if (request.model || view.note)
    lines.push(`  ${[request.model && `Model ${escapeControls(request.model)}`, view.note && escapeControls(view.note)].filter(Boolean).join("; ")}.`);
  if (request.attempt !== undefined && request.attempt > 1) lines.push(`  Attempt ${request.attempt}.`);
  if (request.error) lines.push(`  Error: ${escapeControls(request.error)}`);
  lines.push(view.stuckReason ? `  Stuck: ${escapeControls(view.stuckReason)}.` : "  Not stuck.");
  if (view.steps?.length) {
    const shown = view.steps.slice(-STEP_LINES);
    lines.push(`  Steps (${view.steps.length}${shown.length < view.steps.length ? `, the newest ${shown.length}` : ""}):`);
    for (const step of shown) lines.push(`    - ${new Date(step.at).toISOString()} ${escapeControls(step.name)}: ${escapeControls(step.summary)}`);
  }
  lines.push(
    `  reqwatch only shows ${source.kind === "otel" ? "what it received" : "this queue"}: nothing to retry or cancel here; its page is /sources/${encodeURIComponent(source.name)}/${encodeURIComponent(request.requestId)}.`,
  );
  return {
    requestId: request.requestId,
    source: source.name,
    state: request.state,
    stateSince,
    timeInStates: spent,
    stuckReason: view.stuckReason,
    note: view.note,
    steps: view.steps,
    lines,
  };
}
