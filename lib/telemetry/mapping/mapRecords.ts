import { stringAttr, type TelemetryRecord } from "../records";
import type { LifecycleChange, Unmapped } from "./changes";
import { claudeCodeLog, claudeCodeSpan, isClaudeCode } from "./claudeCode";
import { genAiSpan, isGenAiCall } from "./genAi";
import { isMessaging, messagingSpan } from "./messaging";

/**
 * Received records as lifecycle changes, each by the first mapping that knows it: Claude Code's own
 * (its scopes), then messaging spans, then GenAI model calls. What none knows is counted, never
 * dropped unseen: per service, signal and name (a span's name, a log event's, a metric's).
 */
export function mapRecords(records: readonly TelemetryRecord[]): { changes: LifecycleChange[]; unmapped: Unmapped[] } {
  const changes: LifecycleChange[] = [];
  const unmapped: Unmapped[] = [];
  for (const record of records) {
    const service = stringAttr(record.origin.resource, "service.name") ?? "unknown_service";
    let change: LifecycleChange | null = null;
    if (record.signal === "span") {
      if (isClaudeCode(record.origin.scope.name)) change = claudeCodeSpan(record);
      else if (isMessaging(record)) change = messagingSpan(record);
      else if (isGenAiCall(record)) change = genAiSpan(record);
      if (!change) unmapped.push({ service, signal: "span", name: record.name });
    } else if (record.signal === "log") {
      if (isClaudeCode(record.origin.scope.name)) change = claudeCodeLog(record);
      if (!change) unmapped.push({ service, signal: "log", name: record.eventName ?? (typeof record.body === "string" ? record.body.slice(0, 80) : "") });
    } else {
      unmapped.push({ service, signal: "metric", name: record.name });
    }
    if (change) changes.push(change);
  }
  return { changes, unmapped };
}
