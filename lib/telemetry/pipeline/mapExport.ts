import { DIALECTS, type Dialect } from "../dialects";
import { stringAttr, type TelemetryRecord } from "../records";
import type { LifecycleChange, Unmapped } from "../mapping/changes";
import { recognise } from "./recognise";

/**
 * The mapping stage: each received record as a change to its lifecycle, by the dialect that
 * recognises it (./recognise.ts). What no dialect maps is counted, never dropped unseen: per
 * service, signal and name, apart when its dialect knows it and leaves it out (`Dialect.knows`) (a span's name, a log event's `event.name` where it carries one, else
 * its record's event name or the start of its body, a metric's name).
 */
export function mapExport(records: readonly TelemetryRecord[], dialects: readonly Dialect[] = DIALECTS): { changes: LifecycleChange[]; unmapped: Unmapped[] } {
  const changes: LifecycleChange[] = [];
  const unmapped: Unmapped[] = [];
  for (const record of records) {
    const dialect = recognise(record, dialects);
    const mapped = dialect?.map(record) ?? null;
    const told = mapped === null ? [] : "kind" in mapped ? [mapped] : mapped;
    if (told.length > 0) changes.push(...told);
    else
      unmapped.push({
        service: stringAttr(record.origin.resource, "service.name") ?? "unknown_service",
        signal: record.signal,
        name: unmappedName(record),
        ...(dialect?.knows?.(record) && { knownBy: dialect.name }),
      });
  }
  return { changes, unmapped };
}

function unmappedName(record: TelemetryRecord): string {
  if (record.signal !== "log") return record.name;
  // Some clients (Codex) put a source line in the record's own event name and the event's name in the attribute.
  return stringAttr(record.attributes, "event.name") ?? record.eventName ?? (typeof record.body === "string" ? record.body.slice(0, 80) : "");
}
