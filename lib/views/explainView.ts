import type { SessionRecord } from "../stateFiles/sessionFile";
import { formatDuration } from "../model/duration";
import { reqwatchCommand } from "../model/shellCommand";
import { isReqwatchError } from "../model/errors";
import { attemptsOf, type Attempt } from "../model/attempts";
import type { RequestRecord } from "../model/requestFormat";
import { isTerminal, STATES, type State } from "../model/states";
import type { StuckRequest } from "../types";
import type { Reader } from "../roles/reader";
import { escapeControls, named, quoted } from "../model/displayText";
import { lifecycleSegments, timeInStates } from "./lifecycle";
import { requestDetailView, type ResponseView } from "./requestsView";
import { plural } from "../model/plural";

/** One attempt: from its claim to what ended it (null while it runs). */
/** A request's story: what happened, what is wrong now, and what to do next. */
interface Explanation {
  requestId: string;
  workspace: string;
  state: State;
  stateSince: number;
  /** Total time in each state so far, in ms. */
  timeInStates: Partial<Record<State, number>>;
  attempts: Attempt[];
  /** Deliveries the claim fence turned away (a worker's result after its claim had ended). */
  droppedDeliveries: { at: number; reason: string; by: string | null }[];
  /** The request's own callback delivery, and a gateway's response file for it. */
  callback: { success: boolean; attempts: number; error: string | null } | null;
  responseFile: ResponseView | null;
  stuckReason: string | null;
  session: { sessionId: string; activeTask: string | null; nextSteps: string[]; blockers: string[] } | null;
  next: { advice: string; command: string | null };
  /** The story in a few lines, for a person or an agent. */
  lines: string[];
}

/** A request's session file, or why it cannot be read (a corrupt file is reported, never fatal here). */
function readSession(reader: Reader, sessionId: string): { session: SessionRecord | null; problem: string | null } {
  try {
    return { session: reader.sessions.get(sessionId), problem: null };
  } catch (error) {
    if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
    return { session: null, problem: error.message };
  }
}

function nextStep(request: RequestRecord, stuckReason: string | null, retry: { allowed: boolean; reason: string }, now: number): Explanation["next"] {
  const id = request.requestId;
  switch (request.state) {
    case "completed":
      return { advice: "Nothing to do: it completed.", command: null };
    case "failed":
    case "timeout":
      return retry.allowed
        ? { advice: `Retry it if the cause is fixed (${retry.reason}).`, command: reqwatchCommand("retry", [id]) }
        : { advice: `It cannot be retried: ${retry.reason}.`, command: null };
    case "created":
      return { advice: "It was never queued: queue it for a worker to claim.", command: reqwatchCommand("update", [id], ["--state", "queued"]) };
    case "queued":
      if (request.notBefore !== undefined && request.notBefore > now) {
        return { advice: `It waits for its back-off, until ${new Date(request.notBefore).toISOString()}.`, command: null };
      }
      return stuckReason
        ? { advice: `No worker has claimed it: start a worker for workspace ${request.workspace}, or cancel it.`, command: reqwatchCommand("cancel", [id]) }
        : { advice: "It waits for a worker; nothing to do yet.", command: null };
    case "processing":
      if (!request.claim) {
        // Another program (or a hand) moved it: reqwatch cannot tell whether that program still runs it.
        const advice = "No reqwatch worker holds it: whatever moved it to processing is expected to finish it.";
        return retry.allowed
          ? { advice: `${advice} If that is gone, send it back to the queue.`, command: reqwatchCommand("retry", [id]) }
          : { advice, command: null };
      }
      if (!stuckReason) return { advice: "A worker is on it; nothing to do yet.", command: null };
      return retry.allowed
        ? { advice: `Send it back to the queue (${retry.reason}).`, command: reqwatchCommand("retry", [id]) }
        : { advice: `Wait for its worker or the monitor: ${retry.reason}.`, command: null };
  }
}

/** In a folder reqwatch only observes, its commands are refused: the step is the owning program's. */
function leftToOwner(next: Explanation["next"], ownership: Reader["ownership"]): Explanation["next"] {
  if (ownership.access === "managed" || next.command === null) return next;
  return { advice: `${next.advice} The program that writes this folder has to do it: reqwatch only observes it (${ownership.reason}).`, command: null };
}

/** An attempt in a line: who claimed it and how it ended, or that it runs without a reqwatch claim. */
function attemptLine(request: RequestRecord, attempt: Attempt): string {
  const how = attempt.ended
    ? `${attempt.ended.state}${attempt.ended.reason ? ` (${quoted(attempt.ended.reason)})` : ""}${attempt.ended.error ? `: ${quoted(attempt.ended.error)}` : ""}`
    : "still running";
  const unclaimed = !attempt.ended && request.state === "processing" && !request.claim;
  return unclaimed
    ? `Attempt ${attempt.number}: moved to processing${attempt.by ? ` by ${named(attempt.by)}` : ""} at ${new Date(attempt.claimedAt).toISOString()} without a reqwatch claim (another program, or by hand); no reqwatch worker holds it.`
    : `Attempt ${attempt.number}: claimed by ${attempt.by ? named(attempt.by) : "a worker"}${attempt.worker ? ` (pid ${attempt.worker.pid} on ${named(attempt.worker.host)})` : ""} at ${new Date(attempt.claimedAt).toISOString()}, ${how}.`;
}

/** The claim a processing request is held by: its process and its last heartbeat. */
function claimLine(claim: NonNullable<RequestRecord["claim"]>, now: number): string {
  return `Held by pid ${claim.pid ?? "?"} on ${claim.host ? named(claim.host) : "an unknown host"}, last heartbeat ${claim.heartbeatAt ? `${formatDuration(Math.max(0, now - claim.heartbeatAt))} ago` : "never"}.`;
}

/**
 * Explain one request: the time it spent in each state, its attempts, the deliveries that were
 * dropped, its callback, why it is stuck (the monitor's rules), its session's context, and what to
 * do next with the command for it. Null when the request does not exist.
 */
export function explainRequest(reader: Reader, requestId: string, stuck: readonly StuckRequest[]): Explanation | null {
  const detail = requestDetailView(reader, requestId, stuck);
  if (!detail) return null;
  const { request, stuckReason, stateSince } = detail;
  const now = reader.options.now();
  const transitions = request.transitions ?? [];
  const attempts = attemptsOf(transitions);
  // A final failure keeps its error in the request's own field, not in the history entry.
  const last = attempts.at(-1);
  if (last?.ended && last.ended.error === null && last.ended.state === request.state && typeof request.error === "string") last.ended.error = request.error;
  const droppedDeliveries = transitions
    .filter((entry) => entry.dropped)
    .map((entry) => ({ at: entry.at, reason: entry.reason ?? "dropped", by: entry.by ?? null }));
  const spent = timeInStates(lifecycleSegments(request, now));
  const read = request.sessionId ? readSession(reader, request.sessionId) : null;
  const snapshot = read?.session?.context_snapshot ?? {};
  const session = request.sessionId
    ? { sessionId: request.sessionId, activeTask: snapshot.active_task ?? null, nextSteps: snapshot.next_steps ?? [], blockers: snapshot.blocking_issues ?? [] }
    : null;
  // A gateway's callback delivery is in its response file, not the request's.
  const delivery = request.callback ?? (detail.response?.status === "ok" ? detail.response.response.callback : undefined);
  const callback = delivery ? { success: delivery.success, attempts: delivery.attempts, error: delivery.error ?? null } : null;
  const next = leftToOwner(nextStep(request, stuckReason, detail.actions.retry, now), reader.ownership);

  // Text from the files is quoted (names shown bare when plain words): a line break in an error must not start a line of reqwatch's own.
  const lines = [`${request.requestId} (workspace ${request.workspace}) is ${request.state}, since ${formatDuration(Math.max(0, now - stateSince))} ago.`];
  // A final state is a moment, not a stay (the line above says when it was reached).
  const times = STATES.filter((state) => spent[state] !== undefined && !(isTerminal(state) && state === request.state)).map(
    (state) => `${state} ${formatDuration(spent[state]!)}`,
  );
  lines.push(`Time in each state: ${times.join(", ")}.`);
  for (const attempt of attempts) lines.push(attemptLine(request, attempt));
  if (request.state === "processing" && request.claim) lines.push(claimLine(request.claim, now));
  // A file another program wrote keeps its error without a history entry to carry it.
  if (typeof request.error === "string" && request.error && !attempts.some((attempt) => attempt.ended?.error === request.error))
    lines.push(`Error: ${quoted(request.error)}.`);
  for (const drop of droppedDeliveries) lines.push(`Dropped at ${new Date(drop.at).toISOString()}: ${quoted(drop.reason)}.`);
  if (callback)
    lines.push(
      `Callback: ${callback.success ? "delivered" : "failed"} after ${plural(callback.attempts, "attempt")}${callback.error ? ` (${quoted(callback.error)})` : ""}.`,
    );
  if (detail.response)
    lines.push(
      `Response file ${escapeControls(detail.response.file)}: ${detail.response.status === "ok" ? "present" : detail.response.status}${detail.response.status === "unreadable" ? ` (${escapeControls(detail.response.reason)})` : ""}.`,
    );
  if (stuckReason) lines.push(`Stuck: ${stuckReason}.`);
  if (session) {
    lines.push(
      `Session ${session.sessionId}: ${read?.problem ? escapeControls(read.problem) : read?.session ? `focus ${session.activeTask === null ? "—" : quoted(session.activeTask)}` : "no context recorded"}.`,
    );
    if (session.nextSteps.length) lines.push(`  Next steps: ${session.nextSteps.map(quoted).join("; ")}.`);
    if (session.blockers.length) lines.push(`  Blockers: ${session.blockers.map(quoted).join("; ")}.`);
  }
  lines.push(`Next: ${next.advice}${next.command ? ` Run: ${next.command}` : ""}`);

  return {
    requestId: request.requestId,
    workspace: request.workspace,
    state: request.state,
    stateSince,
    timeInStates: spent,
    attempts,
    droppedDeliveries,
    callback,
    responseFile: detail.response,
    stuckReason,
    session,
    next,
    lines,
  };
}
