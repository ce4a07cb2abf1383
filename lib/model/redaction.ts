import { ReqwatchError } from "./errors";
import { TEXT_FIELDS, type RequestFields, type RequestRecord } from "./requestFormat";
import { findPattern, findSecrets, RANK_FORMAT } from "./secretPatterns";

/**
 * What reqwatch redacts before it writes, by the names that turn it off: a request's prompt, output
 * and error (its history's errors and a callback's error with it), and a session's commands, changed
 * files (`fileSummary`: their paths and summaries), snapshot (focus, steps, key files) and blocking issues.
 */
export const REDACT_FIELDS = ["prompt", "output", "error", "command", "fileSummary", "snapshot", "blockers"] as const;
export type RedactField = (typeof REDACT_FIELDS)[number];

/** A user's own secret format: its kind names it in the marker. */
export interface ExtraPattern {
  kind: string;
  pattern: RegExp;
}

/** The resolved setting. Data only: it goes to a rebuild's thread with the other options. */
export interface Redaction {
  /** Fields written as given. */
  raw: readonly RedactField[];
  /** Found besides the built-in formats. */
  patterns: readonly ExtraPattern[];
}

/** What replaces a secret: its kind stays, so a reader knows what was there. */
function redactionMarker(kind: string): string {
  return `[redacted: ${kind}]`;
}

/** Every marker `redactionMarker` writes, in a text. */
export const REDACTION_MARKERS = /\[redacted: [^\]\n]*\]/g;

/**
 * `text` with every secret replaced by its marker. Overlapping findings become one marker, named by
 * the most specific (`GITHUB_TOKEN=ghp_...` is a github token, not a token). A text already
 * redacted comes back the same.
 */
export function redactSecrets(text: string, patterns: readonly ExtraPattern[] = []): string {
  if (text === "") return text;
  const findings = findSecrets(text);
  for (const extra of patterns) findPattern(text, extra.pattern, extra.kind, RANK_FORMAT, [], findings);
  if (findings.length === 0) return text;
  findings.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let at = 0;
  for (let i = 0; i < findings.length;) {
    const first = findings[i]!;
    let { end, kind, rank } = first;
    for (i++; i < findings.length && findings[i]!.start < end; i++) {
      const next = findings[i]!;
      end = Math.max(end, next.end);
      if (next.rank > rank) ({ kind, rank } = next);
    }
    out += text.slice(at, first.start) + redactionMarker(kind);
    at = end;
  }
  return out + text.slice(at);
}

/** One field's text as it is to be written: redacted (by `redact`, which must give what redactSecrets gives), unless the user asked for it raw. */
export function redactField(
  redaction: Redaction,
  field: RedactField,
  text: string,
  redact = (value: string) => redactSecrets(value, redaction.patterns),
): string {
  return redaction.raw.includes(field) ? text : redact(text);
}

/** The text fields (and a callback's error) that differ from `before`'s, redacted. */
function redactTextFields<T extends RequestFields>(redaction: Redaction, fields: T, before: RequestFields | null): T {
  let out = fields;
  for (const field of TEXT_FIELDS) {
    const value = fields[field];
    if (typeof value !== "string" || value === before?.[field]) continue;
    const redacted = redactField(redaction, field, value);
    if (redacted !== value) out = { ...out, [field]: redacted };
  }
  const callbackError = fields.callback?.error;
  if (fields.callback && callbackError !== undefined && callbackError !== before?.callback?.error) {
    const redacted = redactField(redaction, "error", callbackError);
    if (redacted !== callbackError) out = { ...out, callback: { ...fields.callback, error: redacted } };
  }
  return out;
}

/** Fields a worker reports (a result marker's), redacted as the request's will be. */
export function redactRequestFields(redaction: Redaction, fields: RequestFields): RequestFields {
  return redactTextFields(redaction, fields, null);
}

/**
 * The version about to be written, with the text it brings redacted: text fields that differ from
 * the current version's and the errors of new history steps. Text already in the file is not read
 * again, so a transition costs nothing here unless it sets text.
 */
export function redactRequest(redaction: Redaction, current: RequestRecord | null, next: RequestRecord): RequestRecord {
  const out = redactTextFields(redaction, next, current);
  const known = current?.transitions?.length ?? 0;
  let changed = false;
  const steps = (next.transitions ?? []).map((step, i) => {
    if (i < known || step.error === undefined) return step;
    const error = redactField(redaction, "error", step.error);
    if (error === step.error) return step;
    changed = true;
    return { ...step, error };
  });
  return changed ? { ...out, transitions: steps } : out;
}

const KIND = /^[A-Za-z0-9][A-Za-z0-9 _./-]{0,39}$/;

/**
 * A user's pattern: a RegExp, or its source as text (`/source/flags` to give flags). Refused with
 * a message naming `where` when it is not a regular expression or matches empty text.
 */
export function compileExtraPattern(kind: string, value: unknown, where: string): ExtraPattern {
  if (!KIND.test(kind)) {
    throw new ReqwatchError(
      "BAD_INPUT",
      `${where}: the kind ${JSON.stringify(kind)} must be 1 to 40 letters, digits, spaces, or _ . / - (it is shown in the marker, [redacted: <kind>]).`,
    );
  }
  let source: string;
  let flags: string;
  if (value instanceof RegExp) [source, flags] = [value.source, value.flags];
  else if (typeof value === "string" && value !== "") {
    const literal = /^\/(.+)\/([a-z]*)$/s.exec(value);
    [source, flags] = literal ? [literal[1]!, literal[2]!] : [value, ""];
  } else throw new ReqwatchError("BAD_INPUT", `${where}: the pattern for "${kind}" must be a regular expression or its source as text.`);
  let pattern: RegExp;
  try {
    pattern = new RegExp(source, `${flags.replace(/[gy]/g, "")}g`);
  } catch (error) {
    throw new ReqwatchError("BAD_INPUT", `${where}: the pattern for "${kind}" is not a valid regular expression (${(error as Error).message}).`);
  }
  pattern.lastIndex = 0;
  if (pattern.test(""))
    throw new ReqwatchError("BAD_INPUT", `${where}: the pattern for "${kind}" matches empty text, so it would mark every place in every text.`);
  pattern.lastIndex = 0;
  return { kind, pattern };
}
