import { z } from "zod";
import { STATES } from "../model/states";
import type { RetryTarget } from "../queue/retry";

const requestId = z.string().min(1).max(128);
/** The dry run's id: the run acts on what it described, and on no other request. */
const dryRunId = z.string().max(100).optional();

/**
 * An action as a client asks for it (the dashboard's body, the browser's type): the one definition,
 * whose types the server, lib and the browser derive. lib checks ids, states and filters again in depth.
 */
export const actionBodySchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("retry"),
    /** These requests... */
    ids: z.array(requestId).min(1).max(10_000).optional(),
    /** ...or every request the table's URL query matches (`states=failed&stuck=1`). */
    query: z.string().max(4000).optional(),
    dryRunId,
  }),
  z.strictObject({ kind: z.literal("cancel"), ids: z.array(requestId).min(1).max(10_000), dryRunId }),
  z.strictObject({ kind: z.literal("cleanup"), olderThanMs: z.number().int().min(0), states: z.array(z.enum(STATES)).min(1).optional(), dryRunId }),
]);

export type ActionBody = z.infer<typeof actionBodySchema>;

/**
 * What a person asks of the dashboard in one action, as lib runs it: the body, with a retry's table
 * query resolved to the filter it means now (the query goes along: a confirmation is compared with
 * its dry run by it, not by the filter, which moves with the clock). A run after a dry run names it
 * (`dryRunId`, the id its dry run returned) and asks the same: it then acts on the requests the dry run
 * described, with its cutoff, and on no other. A run that asks otherwise than its dry run is refused.
 */
export type ActionInput = Exclude<ActionBody, { kind: "retry" }> | (Extract<ActionBody, { kind: "retry" }> & { filter?: RetryTarget["filter"] });
