import { z } from "zod";
import { TRACEPARENT_PATTERN } from "./traceparent";
import { REQUEST_ID_PATTERN, WORKSPACE_PATTERN } from "./ids";
import { STATES } from "./states";
import { lazily } from "./lazily";

/**
 * The request state file, format version 1 (docs/ARCHITECTURE.md, "The state directory"). Only the five identity and lifecycle
 * fields are required so files written by a gateway's own tracker still load; unknown fields are kept
 * (loose objects) so a rewrite never drops what another tool stored.
 */
const epochMs = () => z.number().finite();
const state = () => z.enum(STATES);

const transitionEntrySchema = lazily(() =>
  z.looseObject({
    from: state().nullable(),
    to: state(),
    at: epochMs(),
    reason: z.string().optional(),
    by: z.string().optional(),
    fields: z.array(z.string()).optional(),
    /** The claim this step acted under (claims, completions, failures, dropped deliveries). */
    token: z.string().optional(),
    /** A late or stale delivery that changed nothing but this entry. */
    dropped: z.boolean().optional(),
    /** A retry asked for by a person (CLI or dashboard), not by the retry policy. */
    manual: z.boolean().optional(),
    /** The error of the attempt this step ended or left behind (a retryable failure, a retry of a failed request). */
    error: z.string().optional(),
    /** On a claim: the worker process that made it, so the history keeps who ran each attempt after the claim is gone. */
    worker: z.looseObject({ pid: z.number().int(), host: z.string(), processStartedAt: z.number().optional() }).optional(),
  }),
);

export const callbackSchema = lazily(() =>
  z.looseObject({
    success: z.boolean(),
    attempts: z.number().int().nonnegative(),
    retryTimestamps: z.array(z.union([z.string(), epochMs()])),
    error: z.string().optional(),
  }),
);

const claimSchema = lazily(() =>
  z.looseObject({
    token: z.string(),
    pid: z.number().int().optional(),
    host: z.string().optional(),
    processStartedAt: epochMs().optional(),
    claimedAt: epochMs().optional(),
    heartbeatAt: epochMs().optional(),
  }),
);

/** The free-text fields, any length: searched (their start), shown cut on the detail page, downloadable whole. */
export const TEXT_FIELDS = ["prompt", "output", "error"] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/** Fields a caller may set on create or update. Everything else is managed by the tracker. */
const requestFieldsShape = () => ({
  chatId: z.union([z.string(), z.number().finite()]).optional(),
  sessionId: z.string().regex(REQUEST_ID_PATTERN, "must be 1 to 128 letters, digits, _ or -").optional(),
  prompt: z.string().optional(),
  model: z.string().optional(),
  tokens: z.number().int().nonnegative().optional(),
  exitCode: z.number().int().optional(),
  output: z.string().optional(),
  error: z.string().optional(),
  callback: callbackSchema().optional(),
  timeoutAt: epochMs().optional(),
  timedOut: z.boolean().optional(),
  maxAttempts: z.number().int().positive().optional(),
  /** A queued request is not claimed before this time (a retry's back-off, or a scheduled request). */
  notBefore: epochMs().optional(),
  /** The W3C trace context it was created in: its OpenTelemetry trace joins that one (lib/otel). */
  traceparent: z.string().regex(TRACEPARENT_PATTERN, "must be a W3C traceparent: 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>").optional(),
});

export const requestSchema = lazily(() =>
  z.looseObject({
    requestId: z.string().regex(REQUEST_ID_PATTERN, "must be 1 to 128 letters, digits, _ or -"),
    workspace: z.string().regex(WORKSPACE_PATTERN, "must be 1 to 64 letters, digits, _ or -"),
    state: state(),
    previousState: state().optional(),
    createdAt: epochMs(),
    queuedAt: epochMs().optional(),
    processingStartedAt: epochMs().optional(),
    completedAt: epochMs().optional(),
    lastUpdatedAt: epochMs(),
    version: z.number().int().nonnegative().optional(),
    attempt: z.number().int().nonnegative().optional(),
    claim: claimSchema().nullable().optional(),
    transitions: z.array(transitionEntrySchema()).optional(),
    ...requestFieldsShape(),
  }),
);

export type RequestRecord = z.infer<ReturnType<typeof requestSchema>>;
export type TransitionEntry = z.infer<ReturnType<typeof transitionEntrySchema>>;
export type CallbackInfo = z.infer<ReturnType<typeof callbackSchema>>;

/** Keys the tracker owns; a caller's `fields` may not set them. */
export const MANAGED_KEYS = [
  "requestId",
  "workspace",
  "state",
  "previousState",
  "createdAt",
  "queuedAt",
  "processingStartedAt",
  "completedAt",
  "lastUpdatedAt",
  "version",
  "attempt",
  "claim",
  "transitions",
] as const;

export const requestFieldsSchema = lazily(() => z.looseObject(requestFieldsShape()));
export type RequestFields = z.infer<ReturnType<typeof requestFieldsSchema>>;

/** One line a person can act on: `field 'state': expected one of ... ` */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid value";
  const where = issue.path.length ? `field '${issue.path.join(".")}'` : "value";
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problem${error.issues.length > 2 ? "s" : ""})` : "";
  return `${where}: ${issue.message}${more}`;
}
