import { DIALECTS, type Dialect } from "../dialects";
import type { TelemetryRecord } from "../records";

/** The dialect that speaks for a record: the first in `DIALECTS` that recognises it; null when none does. */
export function recognise(record: TelemetryRecord, dialects: readonly Dialect[] = DIALECTS): Dialect | null {
  for (const dialect of dialects) if (dialect.recognises(record)) return dialect;
  return null;
}
