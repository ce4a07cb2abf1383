import { z } from "zod";
import { ReqwatchError } from "./errors";
import { REQUEST_ID_PATTERN, WORKSPACE_PATTERN } from "./ids";
import { describeZodError } from "./schema";
import { STATES } from "./states";

export const SORT_FIELDS = ["updatedAt", "createdAt"] as const;
export const MAX_PAGE_SIZE = 1000;

/** The filters a list accepts, shared by the library, the CLI and the routes. */
export const listFiltersSchema = z.strictObject({
  workspace: z.string().regex(WORKSPACE_PATTERN, "must be 1 to 64 letters, digits, _ or -").optional(),
  states: z.array(z.enum(STATES)).optional(),
  sessionId: z.string().regex(REQUEST_ID_PATTERN, "must be 1 to 128 letters, digits, _ or -").optional(),
  /** Words that must appear in the prompt, output or error (each as a word or a word's start). */
  text: z.string().max(500).optional(),
  /** Only these requests (the stuck-only view passes the monitor's stuck ids). */
  ids: z.array(z.string().regex(REQUEST_ID_PATTERN, "must be 1 to 128 letters, digits, _ or -")).max(100_000).optional(),
  /** Only requests whose callback delivery failed: their own `callback`, or a gateway's response file (lib/responses). */
  callbackFailed: z.boolean().optional(),
  createdFrom: z.number().finite().optional(),
  createdTo: z.number().finite().optional(),
  updatedFrom: z.number().finite().optional(),
  updatedTo: z.number().finite().optional(),
  sort: z.enum(SORT_FIELDS).default("updatedAt"),
  order: z.enum(["asc", "desc"]).default("desc"),
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
