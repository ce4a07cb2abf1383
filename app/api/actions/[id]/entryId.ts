import { ReqwatchError } from "@/lib/model/errors";

export function entryId(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw new ReqwatchError("BAD_INPUT", `Invalid audit entry id "${raw.slice(0, 40)}".`);
  return Number(raw);
}
