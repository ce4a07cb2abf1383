import { z } from "zod";
import { readJsonBody } from "@/app/_routes/body";
import { ReqwatchError } from "@/lib/model/errors";
import { describeZodError } from "@/lib/model/requestFormat";

/** What the browser may ask of a workspace's queue; lib checks the workspace's name. */
const pauseBody = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("pause"), reason: z.string().max(500).optional() }),
  z.strictObject({ action: z.literal("resume") }),
]);

type PauseBody = z.infer<typeof pauseBody>;

export async function parsePauseBody(request: Request): Promise<PauseBody> {
  const parsed = pauseBody.safeParse(await readJsonBody(request, 4096));
  if (!parsed.success) throw new ReqwatchError("BAD_INPUT", `Invalid queue action: ${describeZodError(parsed.error)}`);
  return parsed.data;
}
