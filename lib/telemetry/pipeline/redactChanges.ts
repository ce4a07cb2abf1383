import { redactField, redactSecrets, type Redaction } from "../../model/redaction";
import type { AttributeValue } from "../records";
import type { Facts, LifecycleChange } from "../mapping/changes";

/**
 * The redaction stage: every text a change carries (its step's summary and detail, its facts'
 * prompt, output and error by their fields' settings, its part's fields) with the secrets taken
 * out, before anything is stored. Within one export the same text (a model's name, a tool's) is
 * scanned once; the result is what scanning it each time would give.
 */
export function redactChanges(changes: readonly LifecycleChange[], redaction: Redaction): LifecycleChange[] {
  const seen = new Map<string, string>();
  const redact = (text: string) => {
    let redacted = seen.get(text);
    if (redacted === undefined) seen.set(text, (redacted = redactSecrets(text, redaction.patterns)));
    return redacted;
  };
  return changes.map((change) => {
    const facts: Facts = { ...change.facts };
    if (facts.prompt !== undefined) facts.prompt = redactField(redaction, "prompt", facts.prompt, redact);
    if (facts.output !== undefined) facts.output = redactField(redaction, "output", facts.output, redact);
    if (facts.error !== undefined) facts.error = redactField(redaction, "error", facts.error, redact);
    if (facts.part) facts.part = { ...facts.part, fields: redactValue(facts.part.fields as Record<string, AttributeValue>, redact) as typeof facts.part.fields };
    return { ...change, step: { ...change.step, summary: redact(change.step.summary), detail: redactValue(change.step.detail, redact) }, facts };
  });
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
