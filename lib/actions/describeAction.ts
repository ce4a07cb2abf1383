import { formatDuration } from "../model/duration";
import { TERMINAL_STATES } from "../model/states";
import type { RetryTarget } from "../queue/retry";
import type { ActionInput } from "./actionInput";

function describeFilter(filter: NonNullable<RetryTarget["filter"]>): string {
  const parts = Object.entries(filter)
    .filter(([, value]) => value !== undefined && !(Array.isArray(value) && value.length === 0))
    .map(([key, value]) => `${key} ${Array.isArray(value) ? value.join(", ") : String(value)}`);
  return parts.length ? parts.join("; ") : "all requests";
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** An action in a person's words: the dry run's summary and its audit entry's. */
export function describeAction(input: ActionInput): string {
  if (input.kind === "retry") {
    if (input.ids) return `Retry ${plural(input.ids.length, "selected request")}`;
    return `Retry every request matching: ${describeFilter(input.filter ?? {})}`;
  }
  if (input.kind === "cancel") return input.ids.length === 1 ? `Cancel ${input.ids[0]}` : `Cancel ${plural(input.ids.length, "request")}`;
  return `Clean up ${(input.states ?? TERMINAL_STATES).join(", ")} requests not updated for ${formatDuration(input.olderThanMs)}`;
}

/** What the audit entry records as an action's input (a cleanup's with the cutoff it works to). */
export function auditTarget(input: ActionInput, cutoff?: number): unknown {
  if (input.kind === "cleanup") return { olderThanMs: input.olderThanMs, states: input.states ?? TERMINAL_STATES, cutoff };
  return input.kind === "cancel" || input.ids ? { ids: input.ids } : { filter: input.filter };
}

/** Who a retry's history names: the person's tool and the audit entry, so each request says which action changed it. */
export function actedBy(by: string, entryId: number): string {
  return `${by} (action #${entryId})`;
}
