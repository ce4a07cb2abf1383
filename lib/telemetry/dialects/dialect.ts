import type { TelemetryRecord } from "../records";
import type { LifecycleChange } from "../mapping/changes";

/**
 * One client's or library's way of telling what it did over OpenTelemetry (Claude Code's events,
 * the GenAI conventions' spans, a queue's messaging spans...): how to know its records, and how
 * each one reads as a change to a lifecycle. A dialect is pure: it reads a record and nothing else,
 * so it is tested on the client's own captured exports. A new client is one new module and its
 * fixtures, listed in `DIALECTS` (./index.ts).
 */
export interface Dialect {
  /** The name Health and the docs use: `claude-code`, `genai`, `messaging`. */
  readonly name: string;
  /**
   * Whether this dialect speaks for the record, by what the export carries (its resource, its
   * scope, its attributes' names), never by a guess at its content: the first dialect in
   * `DIALECTS` that says yes maps it.
   */
  recognises(record: TelemetryRecord): boolean;
  /**
   * The record as a change to its lifecycle, or to several (a span telling of each of its
   * attempts, or of many jobs: BullMQ's stalled-jobs check); null, or none, when it tells of none
   * (counted as unmapped).
   */
  map(record: TelemetryRecord): LifecycleChange | readonly LifecycleChange[] | null;
  /**
   * Of the records it maps to none, whether this one is known and left out on purpose, telling of
   * no lifecycle (Codex's spans that time its inner work, a stalled-jobs check that found none):
   * counted apart on the Health page, so its unmapped names are those no dialect understands.
   */
  knows?(record: TelemetryRecord): boolean;
}
