import { formatDuration } from "../model/duration";
import { plural } from "../model/plural";
import { TERMINAL_STATES } from "../model/states";
import { parseRequestQuery, type RequestQuery } from "../model/requestQuery";
import type { RetryTarget } from "../queue/retry";
import type { ActionInput } from "./actionInput";

/** How many ids an action's words name before "and N more". */
const NAMED_IDS = 3;

/** `req-42`; `s-1, s-3`; `a, b, c and 9 more`: the ids an action acts on, a few by name. */
export function nameIds(ids: readonly string[], total = ids.length): string {
  const named = ids.slice(0, NAMED_IDS).join(", ");
  return total > NAMED_IDS ? `${named} and ${total - NAMED_IDS} more` : named;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A filter in the table's words: `failed or timeout in gateway`, `stuck processing`, `any state`. */
function filterWords(parts: { states?: readonly string[]; stuck?: boolean; words: string[] }): string {
  const states = parts.states?.length ? parts.states.join(" or ") : parts.stuck ? "" : "any state";
  return [parts.stuck ? "stuck" : "", states, ...parts.words].filter(Boolean).join(" ");
}

/** The table's URL query as a person reads it (stuck and "within" as the filters say them, not as the ids and time they resolve to). */
function queryWords(query: RequestQuery): string {
  const words: string[] = [];
  if (query.workspace) words.push(`in ${query.workspace}`);
  else if (query.workspacePrefix) words.push(`in workspaces starting ${query.workspacePrefix}`);
  if (query.session) words.push(`of session ${query.session}`);
  else if (query.sessionPrefix) words.push(`of sessions starting ${query.sessionPrefix}`);
  if (query.within) words.push(`created in the last ${query.within}`);
  if (query.from) words.push(`created from ${query.from}`);
  if (query.to) words.push(`created before ${query.to}`);
  if (query.callback === "failed") words.push("whose callback failed");
  if (query.q) words.push(`containing "${query.q}"`);
  return filterWords({ states: query.states, stuck: query.stuck, words });
}

/** A library or agent's filter in the same words. */
function matchWords(filter: NonNullable<RetryTarget["filter"]>): string {
  const words: string[] = [];
  if (filter.workspace) words.push(`in ${filter.workspace}`);
  if (filter.workspacePrefix) words.push(`in workspaces starting ${filter.workspacePrefix}`);
  if (filter.sessionId) words.push(`of session ${filter.sessionId}`);
  if (filter.sessionPrefix) words.push(`of sessions starting ${filter.sessionPrefix}`);
  if (filter.createdFrom !== undefined) words.push(`created from ${iso(filter.createdFrom)}`);
  if (filter.createdTo !== undefined) words.push(`created before ${iso(filter.createdTo)}`);
  if (filter.ids) words.push(`among ${nameIds(filter.ids)}`);
  if (filter.callbackFailed) words.push("whose callback failed");
  if (filter.text) words.push(`containing "${filter.text}"`);
  return filterWords({ states: filter.states, words });
}

function retryFilterWords(input: Extract<ActionInput, { kind: "retry" }>): string {
  if (input.query !== undefined) {
    try {
      return queryWords(parseRequestQuery(new URLSearchParams(input.query)));
    } catch {
      // The route refuses a query it cannot read before any words are needed; the filter is what it resolved to.
    }
  }
  return matchWords(input.filter ?? {});
}

/**
 * An action in a person's words, as its dialog is titled and its audit entry reads: the ids it acts
 * on by name (`Retry req-42`, `Cancel 12 requests: a, b, c and 9 more`), or the filter and, once a
 * dry run or a run has counted them, how many (`Retry 12 requests matching failed in gateway`).
 */
export function describeAction(input: ActionInput, count?: number): string {
  if (input.kind === "cleanup") return `Clean up ${(input.states ?? TERMINAL_STATES).join(", ")} requests not updated for ${formatDuration(input.olderThanMs)}`;
  const verb = input.kind === "retry" ? "Retry" : "Cancel";
  if (input.ids) return input.ids.length === 1 ? `${verb} ${input.ids[0]}` : `${verb} ${plural(input.ids.length, "request")}: ${nameIds(input.ids)}`;
  const words = input.kind === "retry" ? retryFilterWords(input) : "any state";
  return count === undefined ? `${verb} every request matching ${words}` : `${verb} ${plural(count, "request")} matching ${words}`;
}

/** What the audit entry records as an action's input (a cleanup's with the cutoff it works to; a retry's filter with the table's query it came from). */
export function auditTarget(input: ActionInput, cutoff?: number): unknown {
  if (input.kind === "cleanup") return { olderThanMs: input.olderThanMs, states: input.states ?? TERMINAL_STATES, cutoff };
  return input.kind === "cancel" || input.ids ? { ids: input.ids } : { filter: input.filter, ...(input.query !== undefined && { query: input.query }) };
}

/** Who a retry's history names: the person's tool and the audit entry, so each request says which action changed it. */
export function actedBy(by: string, entryId: number): string {
  return `${by} (action #${entryId})`;
}
