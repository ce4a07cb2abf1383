import { numberAttr, stringAttr, type AttributeValue, type SpanRecord } from "../records";
import type { Facts, LifecycleChange } from "../mapping/changes";
import type { Dialect } from "./dialect";
import { spanStep } from "./stepText";

/**
 * BullMQ's own spans (bullmq 6, traced through bullmq-otel's `BullMQOtel` given as a Queue's and a
 * Worker's `telemetry`), which carry no `messaging.*` attribute: each names its queue and what it
 * did (`bullmq.queue.name`, `bullmq.queue.operation`) and, when it is about one job, the job's id.
 * A job is a message lifecycle named by its queue and id, in its queue's workspace: `add` created
 * and queued it, each `process` is an attempt (its number in `bullmq.job.attempts.made`, its
 * outcome in its `job completed` or `job failed` event), `complete` and `fail` (out of attempts)
 * end it, `delay` and `retry` say it will run again, and a worker's `moveStalledJobsToWait` names
 * the jobs whose worker stopped holding them (killed, or blocked past its lock) and went back to
 * waiting. What tells of no job maps to nothing and is counted: a worker's housekeeping (its
 * `close`, a stalled-jobs check that found none) as known, the rest (`addBulk`) as unmapped.
 */
const CREATE = new Set(["add", "addNode"]);

/** A worker's own housekeeping, which names no job when it did nothing to one: known, shown as no lifecycle. */
const HOUSEKEEPING = new Set(["close", "startStalledCheckTimer", "moveStalledJobsToWait", "getNextJob"]);

export const bullmq: Dialect = {
  name: "bullmq",
  recognises: (record) =>
    record.signal === "span" &&
    stringAttr(record.attributes, "bullmq.queue.name") !== undefined &&
    stringAttr(record.attributes, "bullmq.queue.operation") !== undefined,
  map: (record) => (record.signal === "span" ? bullmqSpan(record) : null),
  // Asked only of what mapped to no job: a stalled-jobs check that found none, a getNextJob that took none, a worker closing.
  knows: (record) => HOUSEKEEPING.has(stringAttr(record.attributes, "bullmq.queue.operation") ?? ""),
};

function bullmqSpan(span: SpanRecord): LifecycleChange | LifecycleChange[] | null {
  const operation = stringAttr(span.attributes, "bullmq.queue.operation")!;
  if (operation === "moveStalledJobsToWait") return stalledJobs(span);
  const id = stringAttr(span.attributes, "bullmq.job.id");
  if (id === undefined) return null;
  const told = CREATE.has(operation)
    ? added(span)
    : operation === "process"
      ? attempt(span)
      : operation === "getNextJob"
        ? taken(span)
        : ended(span, operation);
  return job(span, id, told);
}

/** What one span tells of one job: its step's name, summary and detail, and the facts it adds. */
interface Told {
  name: string;
  summary: string;
  detail?: Record<string, AttributeValue>;
  facts: Facts;
}

const ms = (span: SpanRecord) => `${Math.round(span.endMs - span.startMs)} ms`;

function added(span: SpanRecord): Told {
  return {
    name: "add",
    summary: `into ${stringAttr(span.attributes, "bullmq.queue.name")!}, ${ms(span)}`,
    facts: { startedAt: span.startMs, queuedAt: span.endMs },
  };
}

/** A worker took it (only a worker's own `getNextJob` call says so: its main loop takes jobs without a span). */
function taken(span: SpanRecord): Told {
  const worker = stringAttr(span.attributes, "bullmq.worker.name") ?? stringAttr(span.attributes, "bullmq.worker.id");
  return { name: "taken", summary: worker ? `by worker ${worker}` : "by a worker", facts: { processingAt: span.endMs } };
}

/**
 * One attempt: how it went is in its events (`job completed` with the result, `job failed` with
 * the reason; an `exception` where BullMQ could not record either). A failed attempt does not end
 * the job: whether it runs again is the `delay`, `retry` or `fail` span inside it.
 */
function attempt(span: SpanRecord): Told {
  const number = numberAttr(span.attributes, "bullmq.job.attempts.made");
  const name = `process${number !== undefined ? ` (attempt ${number})` : ""}`;
  const worker = stringAttr(span.attributes, "bullmq.worker.name") ?? stringAttr(span.attributes, "bullmq.worker.id");
  const detail = { ...(number !== undefined && { attempt: number }), ...(worker && { worker }) };
  const facts: Facts = { processingAt: span.startMs, ...(number !== undefined && { attempt: number }) };
  const completed = span.events.find((event) => event.name === "job completed");
  if (completed) {
    const result = stringAttr(completed.attributes, "bullmq.job.result");
    return {
      name,
      summary: `completed, ${ms(span)}`,
      detail,
      facts: { ...facts, endedAt: span.endMs, succeeded: true, ...(result !== undefined && { output: result }) },
    };
  }
  const reason =
    stringAttr(span.events.find((event) => event.name === "job failed")?.attributes ?? {}, "bullmq.job.failed.reason") ??
    stringAttr(span.events.find((event) => event.name === "exception")?.attributes ?? {}, "exception.message") ??
    (span.status.code === "error" ? span.status.message || "failed" : undefined);
  if (reason !== undefined)
    return { name, summary: `failed: ${reason}, ${ms(span)}`, detail: { ...detail, error: reason }, facts: { ...facts, error: reason } };
  return { name, summary: `ended without an outcome, ${ms(span)}`, detail, facts };
}

/** What the job's worker did with it at the end of an attempt, or what else was done to it (removed, its progress updated...). */
function ended(span: SpanRecord, operation: string): Told {
  switch (operation) {
    case "complete":
      return { name: "completed", summary: "moved to completed", facts: { endedAt: span.endMs, succeeded: true } };
    case "fail":
      return { name: "failed", summary: "moved to failed: it runs no more", facts: { endedAt: span.endMs, failed: true } };
    case "delay":
      return { name: "retry later", summary: "back to delayed: it runs again after its backoff", facts: { requeuedAt: span.endMs } };
    case "retry":
      return { name: "retry", summary: "back to waiting: it runs again", facts: { requeuedAt: span.endMs } };
    default:
      return { name: operation, summary: ms(span), facts: {} };
  }
}

/** The jobs a worker found stalled: each went back to waiting (or, stalled too often, to fail on its next attempt). */
function stalledJobs(span: SpanRecord): LifecycleChange[] {
  const fromEvents = span.events.filter((event) => event.name === "job stalled").map((event) => stringAttr(event.attributes, "bullmq.job.id"));
  const listed = span.attributes["bullmq.worker.stalled.jobs"];
  const ids = new Set([...fromEvents, ...(Array.isArray(listed) ? listed : [])].filter((id): id is string => typeof id === "string" && id !== ""));
  const worker = stringAttr(span.attributes, "bullmq.worker.name") ?? stringAttr(span.attributes, "bullmq.worker.id");
  return [...ids].map((id) =>
    job(span, id, { name: "stalled", summary: `its worker stopped holding it; back to waiting${worker ? ` (found by worker ${worker})` : ""}`, facts: {} }),
  );
}

function job(span: SpanRecord, id: string, told: Told): LifecycleChange {
  const queue = stringAttr(span.attributes, "bullmq.queue.name")!;
  const jobName = stringAttr(span.attributes, "bullmq.job.name");
  const operation = stringAttr(span.attributes, "bullmq.queue.operation")!;
  return {
    kind: "message",
    keys: [`message:bullmq/${queue}/${id}`],
    service: queue,
    traceId: span.traceId,
    step: spanStep(span, told.name, `${jobName ? `${jobName} ` : ""}#${id} ${told.summary}`, {
      system: "bullmq",
      queue,
      job: id,
      ...(jobName && { name: jobName }),
      operation,
      ...told.detail,
    }),
    facts: told.facts,
  };
}
