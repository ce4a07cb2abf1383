import { createHash } from "node:crypto";
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes, type HrTime, type SpanContext } from "@opentelemetry/api";
import type { InstrumentationScope } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace-base";
import { attemptsOf, type Attempt } from "../model/attempts";
import type { RequestRecord } from "../model/requestFormat";
import { parseTraceparent } from "../model/traceparent";

/** The OpenTelemetry messaging system name reqwatch's spans carry. */
const MESSAGING_SYSTEM = "reqwatch";

const hex = (text: string, chars: number) => createHash("sha256").update(text).digest("hex").slice(0, chars);

/**
 * A request's ids, derived from its id alone, so exporting the same lifecycle again gives the same
 * spans: the trace (or the trace of the traceparent it was created with), the create span, and
 * each attempt's span.
 */
export function lifecycleIds(request: Pick<RequestRecord, "requestId"> & { traceparent?: unknown }) {
  const joined = parseTraceparent(request.traceparent);
  return {
    traceId: joined?.traceId ?? hex(`reqwatch trace ${request.requestId}`, 32),
    parentSpanId: joined?.spanId ?? null,
    createSpanId: hex(`reqwatch create ${request.requestId}`, 16),
    attemptSpanId: (attempt: number) => hex(`reqwatch attempt ${request.requestId} ${attempt}`, 16),
  };
}

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
const context = (traceId: string, spanId: string): SpanContext => ({ traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: false });

interface SpanInput {
  name: string;
  kind: SpanKind;
  spanContext: SpanContext;
  parent: SpanContext | undefined;
  start: number;
  end: number;
  attributes: Attributes;
  events: TimedEvent[];
  links: ReadableSpan["links"];
  error: string | null;
}

function span(input: SpanInput, resource: Resource, scope: InstrumentationScope): ReadableSpan {
  const end = Math.max(input.start, input.end);
  return {
    name: input.name,
    kind: input.kind,
    spanContext: () => input.spanContext,
    parentSpanContext: input.parent,
    startTime: hrTime(input.start),
    endTime: hrTime(end),
    duration: hrTime(end - input.start),
    status: input.error === null ? { code: SpanStatusCode.UNSET } : { code: SpanStatusCode.ERROR, message: input.error },
    attributes: input.attributes,
    links: input.links,
    events: input.events,
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** What an attempt's end means for `error.type` (none when it completed). */
function errorType(attempt: Attempt): string | null {
  const how = attempt.ended?.how;
  if (!how || how === "completed") return null;
  return how === "timed out" ? "timeout" : how;
}

/**
 * The spans of a request's lifecycle that have ended, after the OpenTelemetry messaging
 * conventions: a PRODUCER `create <workspace>` span from its creation until it was queued (or
 * claimed), and a CONSUMER `process <workspace>` span per attempt, from its claim to its end, a
 * child of the create span and linked to it. The wait between them is the queue wait. A fenced late
 * delivery is an event `dropped: stale claim` on the attempt whose claim it carried. A running
 * attempt has no span until it ends.
 */
export function lifecycleSpans(request: RequestRecord & { traceparent?: unknown }, resource: Resource, scope: InstrumentationScope): ReadableSpan[] {
  const ids = lifecycleIds(request);
  const base: Attributes = {
    "messaging.system": MESSAGING_SYSTEM,
    "messaging.destination.name": request.workspace,
    "messaging.message.id": request.requestId,
    ...(request.sessionId !== undefined && { "session.id": request.sessionId }),
  };
  const history = request.transitions ?? [];
  const attempts = attemptsOf(history);
  const createContext = context(ids.traceId, ids.createSpanId);
  const steps = history.filter((entry) => !entry.dropped && entry.from !== entry.to);
  // The first time it was queued (queuedAt moves with each requeue), so the span stays the same as the lifecycle goes on.
  const createEnd = steps.find((entry) => entry.to === "queued")?.at ?? attempts[0]?.claimedAt ?? request.queuedAt ?? request.createdAt;
  const spans = [
    span(
      {
        name: `create ${request.workspace}`,
        kind: SpanKind.PRODUCER,
        spanContext: createContext,
        parent: ids.parentSpanId ? { ...context(ids.traceId, ids.parentSpanId), isRemote: true } : undefined,
        start: request.createdAt,
        end: createEnd,
        attributes: { ...base, "messaging.operation.type": "create", "messaging.operation.name": "create" },
        events: [],
        links: [],
        error: null,
      },
      resource,
      scope,
    ),
  ];
  for (const attempt of attempts) {
    if (!attempt.ended) continue;
    // The wait before this claim: since the request last entered queued (none when it was created processing).
    const queuedAt =
      steps.filter((entry) => entry.to === "queued" && entry.at <= attempt.claimedAt).at(-1)?.at ?? (attempt.number === 1 ? request.queuedAt : undefined);
    const dropped = history.filter((entry) => entry.dropped && attempt.token !== null && entry.token === attempt.token);
    const last = attempt.number === attempts.length && attempt.ended.state === request.state;
    const type = errorType(attempt);
    spans.push(
      span(
        {
          name: `process ${request.workspace}`,
          kind: SpanKind.CONSUMER,
          spanContext: context(ids.traceId, ids.attemptSpanId(attempt.number)),
          parent: createContext,
          start: attempt.claimedAt,
          end: attempt.ended.at,
          attributes: {
            ...base,
            "messaging.operation.type": "process",
            "messaging.operation.name": "process",
            "reqwatch.attempt": attempt.number,
            "reqwatch.outcome": attempt.ended.how,
            "reqwatch.wait_ms": queuedAt === undefined ? 0 : Math.max(0, attempt.claimedAt - queuedAt),
            ...(attempt.worker && { "process.pid": attempt.worker.pid, "host.name": attempt.worker.host }),
            ...(type !== null && { "error.type": type }),
            // The request's model and tokens are its last attempt's.
            ...(last && request.model !== undefined && { "gen_ai.request.model": request.model }),
            ...(last && request.tokens !== undefined && { "gen_ai.usage.output_tokens": request.tokens }),
          },
          events: dropped.map((entry) => ({
            name: "dropped: stale claim",
            time: hrTime(entry.at),
            attributes: { "reqwatch.to": entry.to, ...(entry.reason !== undefined && { "reqwatch.reason": entry.reason }) },
          })),
          links: [{ context: createContext }],
          // The step's own error, else the request's (a final failure keeps it there), else why the step was taken.
          error: type === null ? null : (attempt.ended.error ?? (last ? request.error : undefined) ?? attempt.ended.reason ?? type),
        },
        resource,
        scope,
      ),
    );
  }
  return spans;
}
