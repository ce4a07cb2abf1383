import { ReqwatchError } from "./errors";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./jsonStructure";
import { describeZodError, requestFieldsSchema, type RequestFields } from "./requestFormat";
import type { Change } from "./transition";

/** A writer's fields, checked against the request format: every store refuses the same input with the same words. */
export function validateFields(fields: RequestFields | undefined): RequestFields | undefined {
  if (fields === undefined) return undefined;
  const parsed = requestFieldsSchema().safeParse(fields);
  if (!parsed.success) throw new ReqwatchError("BAD_INPUT", `Invalid request fields: ${describeZodError(parsed.error)}`);
  // What the reader would refuse is never written: nesting it cannot rewrite.
  if (nestedDeeperThan(parsed.data)) throw new ReqwatchError("BAD_INPUT", `Invalid request fields: nested more than ${MAX_JSON_DEPTH} levels deep`);
  return parsed.data;
}

/** Only the public parts of a change: claims, notes and managed fields are the tracker's own. */
export function validateChange({ to, fields, reason, by }: Change): Change {
  return { to, fields: validateFields(fields), reason, by };
}
