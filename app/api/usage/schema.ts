import { z } from "zod";
import { USAGE_AGENTS } from "@/lib/telemetry/usage/usageLines";
import { knownTimeZone, USAGE_BY } from "@/lib/telemetry/usage/usageReport";

const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "a date, YYYY-MM-DD")
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value), "a date that exists");

/** The usage report's query (`/api/usage`, the Usage page): by what, between which local dates, in which time zone, for which agent. An empty field is no filter. */
export const usageQuery = z.object({
  by: z.enum(USAGE_BY).default("day"),
  since: z.preprocess((value) => value || undefined, date.optional()),
  until: z.preprocess((value) => value || undefined, date.optional()),
  timezone: z.preprocess(
    (value) => value || undefined,
    z
      .string()
      .refine((value) => knownTimeZone(value) !== null, "an IANA time zone, such as UTC or Europe/Paris")
      .optional(),
  ),
  agent: z.preprocess((value) => value || undefined, z.enum(USAGE_AGENTS).optional()),
});
export type UsageQueryInput = z.infer<typeof usageQuery>;
