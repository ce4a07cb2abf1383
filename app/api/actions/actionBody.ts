import { readJsonBody } from "@/app/_routes/body";
import { ReqwatchError } from "@/lib/model/errors";
import { actionBodySchema, type ActionInput } from "@/lib/actions/actionInput";
import { parseRequestQuery, toMatchFilter } from "@/lib/model/requestQuery";
import { describeZodError } from "@/lib/model/requestFormat";

/** The action a request body asks for; a table query becomes the filter it means now (`stuck`: the monitor's latest). */
export async function parseActionInput(request: Request, now: number, stuck: readonly { requestId: string }[]): Promise<ActionInput> {
  const parsed = actionBodySchema.safeParse(await readJsonBody(request));
  if (!parsed.success) throw new ReqwatchError("BAD_INPUT", `Invalid action: ${describeZodError(parsed.error)}`);
  const input = parsed.data;
  if (input.kind !== "retry" || input.query === undefined) return input;
  return {
    ...input,
    filter: toMatchFilter(
      parseRequestQuery(new URLSearchParams(input.query)),
      now,
      stuck.map((s) => s.requestId),
    ),
  };
}
