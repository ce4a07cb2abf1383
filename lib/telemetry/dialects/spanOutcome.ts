import { numberAttr, stringAttr, type SpanRecord } from "../records";
import { ABORTED_BY_CALLER } from "../mapping/stoppedCalls";

/**
 * How a model call's or an agent's span ended, as every GenAI dialect reads it: failed on a status
 * of ERROR, an exception event, an `error.type`, or a finish reason that says error, abort or
 * cancel, with the error's text ("529 AI_APICallError: Overloaded"); a call its client says its
 * caller aborted reads so, plainly ("aborted by the caller: This operation was aborted"); attempts
 * where the span says them (`http.request.resend_count`, the AI SDK's "Failed after 3 attempts").
 */
interface SpanOutcome {
  failed: boolean;
  error?: string;
  attempt?: number;
}

const FAILING_FINISH = /error|abort|cancel/i;
const ABORTED_FINISH = /abort|cancel/i;
/** What clients raise when their caller aborts a call: fetch's AbortError (the AI SDK records it), the Anthropic SDK's APIUserAbortError. */
const ABORT_ERRORS = new Set(["AbortError", "APIUserAbortError"]);

export function spanOutcome(span: SpanRecord, finishReasons: readonly string[], unfinished?: string): SpanOutcome {
  const a = span.attributes;
  const exception = span.events.find((event) => event.name === "exception");
  const exceptionType = exception && stringAttr(exception.attributes, "exception.type");
  const exceptionMessage = exception && stringAttr(exception.attributes, "exception.message");
  // The conventions' fallback types say nothing a person can use.
  const errorType = [stringAttr(a, "error.type"), exceptionType].find((type) => type !== undefined && type !== "_OTHER" && type !== "unknown");
  const failingFinish = finishReasons.find((reason) => FAILING_FINISH.test(reason));
  const failed =
    span.status.code === "error" ||
    exception !== undefined ||
    stringAttr(a, "error.type") !== undefined ||
    failingFinish !== undefined ||
    unfinished !== undefined;
  const resends = numberAttr(a, "http.request.resend_count");
  const message = span.status.message || exceptionMessage || stringAttr(a, "error.message");
  // The AI SDK retries inside one span and says how many times only in its RetryError's message.
  const tries = message === undefined ? undefined : /^Failed after (\d+) attempts/.exec(message)?.[1];
  const attempt = resends !== undefined ? resends + 1 : tries !== undefined ? Number(tries) : undefined;
  if (!failed) return { failed, ...(attempt !== undefined && { attempt }) };
  const abortedFinish = finishReasons.find((reason) => ABORTED_FINISH.test(reason));
  if ((errorType !== undefined && ABORT_ERRORS.has(errorType)) || abortedFinish !== undefined) {
    return { failed, error: `${ABORTED_BY_CALLER}: ${message ?? `finished with ${abortedFinish ?? errorType}`}`, ...(attempt !== undefined && { attempt }) };
  }
  const httpStatus = numberAttr(a, "http.response.status_code");
  const error =
    [[httpStatus, errorType].filter((part) => part !== undefined).join(" "), message].filter(Boolean).join(": ") ||
    (failingFinish !== undefined ? `finished with ${failingFinish}` : undefined) ||
    unfinished ||
    "failed";
  return { failed, error, ...(attempt !== undefined && { attempt }) };
}

/** A span attribute that is a list of texts (finish reasons), as a list, a JSON list in a text (Mastra's), or one text. */
export function textList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === "string");
  if (typeof value !== "string" || value === "") return [];
  if (value.startsWith("[")) {
    try {
      return textList(JSON.parse(value));
    } catch {
      return [value];
    }
  }
  return [value];
}
