import { z } from "zod";
import { readJsonBody } from "@/app/_routes/body";
import { ReqwatchError } from "@/lib/model/errors";
import { STATES } from "@/lib/model/states";
import type { ActionInput } from "@/lib/actions/bulkActions";
import { parseRequestQuery, toMatchFilter } from "@/lib/model/requestQuery";
import { describeZodError } from "@/lib/model/requestFormat";

const requestId = z.string().min(1).max(128);

/** What the browser may ask for; lib validates ids, states and filters again in depth. */
export const actionInput = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("retry"),
    /** These requests... */
    ids: z.array(requestId).min(1).max(10_000).optional(),
    /** ...or every request the table's URL query matches (`states=failed&stuck=1`). */
    query: z.string().max(4000).optional(),
    preview: z.string().max(100).optional(),
  }),
  z.strictObject({
    kind: z.literal("cancel"),
    ids: z.array(requestId).min(1).max(10_000),
    preview: z.string().max(100).optional(),
  }),
  z.strictObject({
    kind: z.literal("cleanup"),
    olderThanMs: z.number().int().min(0),
    states: z.array(z.enum(STATES)).min(1).optional(),
    /** The dry run's id: the run acts on what it described, and on no other request. */
    preview: z.string().max(100).optional(),
  }),
]);

/** The action a request body asks for; a table query becomes the filter it means now (`stuck`: the monitor's latest). */
export async function parseActionInput(request: Request, now: number, stuck: readonly { requestId: string }[]): Promise<ActionInput> {
  const parsed = actionInput.safeParse(await readJsonBody(request));
  if (!parsed.success) throw new ReqwatchError("BAD_INPUT", `Invalid action: ${describeZodError(parsed.error)}`);
  const input = parsed.data;
  if (input.kind === "cleanup" || input.kind === "cancel") return input;
  if (input.ids && input.query !== undefined) throw new ReqwatchError("BAD_INPUT", "A retry takes ids or a query, not both.");
  if (input.ids) return { kind: "retry", ids: input.ids, preview: input.preview };
  if (input.query === undefined) throw new ReqwatchError("BAD_INPUT", "A retry needs ids or a query.");
  // The query goes along: a confirmation is compared with its dry run by it, not by the filter, which moves with the clock.
  return { kind: "retry", filter: toMatchFilter(parseRequestQuery(new URLSearchParams(input.query)), now, stuck.map((s) => s.requestId)), query: input.query, preview: input.preview };
}
