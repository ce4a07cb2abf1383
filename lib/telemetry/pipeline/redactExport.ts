import { redactField, redactSecrets, type Redaction } from "../../model/redaction";
import type { AttributeValue } from "../records";
import type { Facts, LifecycleChange, Unmapped } from "../mapping/changes";

/**
 * The redaction stage: every text kept of an export with the secrets taken out, before anything is
 * stored: each change's step (summary, detail), facts (prompt, output and error by their fields'
 * settings) and part, and each unmapped name (a span named by its SQL, a log by its body's start).
 * Within one export the same text (a model's name, a tool's) is scanned once; the result is what
 * scanning it each time would give.
 */
export function redactExport(
  mapped: { changes: readonly LifecycleChange[]; unmapped: readonly Unmapped[] },
  redaction: Redaction,
): { changes: LifecycleChange[]; unmapped: Unmapped[] } {
  const seen = new Map<string, string>();
  const redact = (text: string) => {
    let redacted = seen.get(text);
    if (redacted === undefined) seen.set(text, (redacted = redactSecrets(text, redaction.patterns)));
    return redacted;
  };
  return {
    changes: mapped.changes.map((change) => redactChange(change, redaction, redact)),
    unmapped: mapped.unmapped.map((item) => ({ ...item, service: redact(item.service), name: redact(item.name) })),
  };
}

function redactChange(change: LifecycleChange, redaction: Redaction, redact: (text: string) => string): LifecycleChange {
  const facts: Facts = { ...change.facts };
  if (facts.prompt !== undefined) facts.prompt = redactField(redaction, "prompt", facts.prompt, redact);
  if (facts.output !== undefined) facts.output = redactField(redaction, "output", facts.output, redact);
  if (facts.error !== undefined) facts.error = redactField(redaction, "error", facts.error, redact);
  if (facts.part) facts.part = { ...facts.part, fields: redactValue(facts.part.fields as Record<string, AttributeValue>, redact) as typeof facts.part.fields };
  return { ...change, step: { ...change.step, summary: redact(change.step.summary), detail: redactValue(change.step.detail, redact) }, facts };
}

/** Every text in a value redacted. */
function redactValue<T extends AttributeValue>(value: T, redact: (text: string) => string): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, redact)) as T;
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, AttributeValue> = {};
  for (const key in value) out[key] = redactValue(value[key]!, redact);
  return out as T;
}
