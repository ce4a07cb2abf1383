import { z } from "zod";
import { ReqwatchError } from "./errors";
import { REQUEST_ID_PATTERN, WORKSPACE_PATTERN } from "./ids";
import { describeZodError } from "./requestFormat";
import { STATES } from "./states";

export const SORT_FIELDS = ["updatedAt", "createdAt"] as const;
export const MAX_PAGE_SIZE = 1000;

/**
 * Each field's check, once: the list filters below and the requests table's URL query
 * (requestQuery.ts) both use them, so the same value gets the same answer and the same message.
 */
export const filterFields = {
  workspace: z.string().regex(WORKSPACE_PATTERN, "must be 1 to 64 letters, digits, _ or -"),
  state: z.enum(STATES, { error: (issue) => `unknown state ${JSON.stringify(issue.input)}; use ${STATES.join(", ")}` }),
  sessionId: z.string().regex(REQUEST_ID_PATTERN, "must be 1 to 128 letters, digits, _ or -"),
  text: z.string().max(500, "the search text is longer than 500 characters"),
  sort: z.enum(SORT_FIELDS, { error: () => `use ${SORT_FIELDS.join(" or ")}` }),
  order: z.enum(["asc", "desc"], { error: () => 'use "asc" or "desc"' }),
};

/** The filters a list accepts, shared by the library, the CLI and the routes. */
const listFiltersSchema = z.strictObject({
  workspace: filterFields.workspace.optional(),
  states: z.array(filterFields.state).optional(),
  sessionId: filterFields.sessionId.optional(),
  /** Workspaces that start with this (the dashboard's filter as you type it: `bat` finds `batch`). */
  workspacePrefix: filterFields.workspace.optional(),
  /** Sessions whose id starts with this. */
  sessionPrefix: filterFields.sessionId.optional(),
  /** Words that must appear in the prompt, output or error (each as a word or a word's start). */
  text: filterFields.text.optional(),
  /** Only these requests (the stuck-only view passes the monitor's stuck ids). */
  ids: z.array(filterFields.sessionId).max(100_000).optional(),
  /** Only requests whose callback delivery failed: their own `callback`, or a gateway's response file (lib/responses). */
  callbackFailed: z.boolean().optional(),
  createdFrom: z.number().finite().optional(),
  createdTo: z.number().finite().optional(),
  updatedFrom: z.number().finite().optional(),
  updatedTo: z.number().finite().optional(),
  sort: filterFields.sort.default("updatedAt"),
  order: filterFields.order.default("desc"),
  limit: z.number().int().min(1).max(MAX_PAGE_SIZE).default(50),
  cursor: z.string().optional(),
});

export type ListFilters = z.input<typeof listFiltersSchema>;
export type ResolvedListFilters = z.output<typeof listFiltersSchema>;

export function resolveListFilters(input: ListFilters = {}): ResolvedListFilters {
  const parsed = listFiltersSchema.safeParse(input);
  if (!parsed.success) throw new ReqwatchError("BAD_INPUT", `Invalid list filter: ${describeZodError(parsed.error)}`);
  return parsed.data;
}
