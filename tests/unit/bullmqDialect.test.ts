import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { inspectTelemetry } from "../../lib/sources/telemetryQueue";
import { NO_REDACTION } from "../helpers/claudeCodeExports";
import { recordedExports, type RecordedExport } from "../helpers/recordedExports";
import { tempParent } from "../helpers/stateDir";
import { readRows } from "../helpers/telemetryRows";

// BullMQ 6.7.0's own spans, as bullmq-otel 2.0.1 and the OpenTelemetry SDK exported them from a
// real producer and worker against a real Redis (tests/fixtures/otlp/bullmq-6.7.0, README there),
// fed to a real store as the receiver would, and each job's lifecycle read back.

const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/bullmq-6.7.0");

function aStore() {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 200e6 });
  const feed = (exports: readonly RecordedExport[], now = Date.now()) => {
    for (const item of exports) ingestExport(store, NO_REDACTION, item.signal, decodeExport(item.signal, "json", item.body), now);
  };
  const read = <T>(sql: string) => readRows<T>(file, sql);
  const jobs = () => read<Record<string, unknown>>("SELECT * FROM lifecycles ORDER BY seq");
  const steps = () =>
    read<{ name: string; summary: string; parent_key: string | null; step_key: string }>(
      "SELECT step_key, name, summary, parent_key FROM steps ORDER BY at, step_key",
    );
  return { file, store, feed, jobs, steps };
}

const scenario = (name: string, now = Date.now()) => recordedExports(path.join(FIXTURES, name), now);

describe("BullMQ's jobs, from its own spans", () => {
  it("a job that completes: one message in its queue's workspace, added, processed once, completed with its result", () => {
    const { store, feed, jobs, steps } = aStore();
    feed(scenario("complete"));
    expect(jobs()).toEqual([
      expect.objectContaining({
        kind: "message",
        service: "complete",
        state: "completed",
        attempt: 1,
        error: null,
        output: '{"done":"welcome"}',
        calls: 0,
        tools: 0,
      }),
    ]);
    const [job] = jobs();
    expect(job!.queued_at).toBeGreaterThanOrEqual(job!.started_at as number);
    expect(job!.processing_at).toBeGreaterThanOrEqual(job!.queued_at as number);
    expect(
      steps()
        .map((step) => `${step.name}: ${step.summary}`)
        .sort(),
    ).toEqual([
      expect.stringMatching(/^add: welcome #1 into complete, \d+ ms$/),
      "completed: welcome #1 moved to completed",
      expect.stringMatching(/^process \(attempt 1\): welcome #1 completed, \d+ ms$/),
    ]);
    // The attempt happened inside the add's trace, the completion inside the attempt.
    const [add, completed, attempt] = ["add", "completed", "process (attempt 1)"].map((name) => steps().find((step) => step.name === name));
    expect(attempt!.parent_key).toBe(add!.step_key);
    expect(completed!.parent_key).toBe(attempt!.step_key);
    // A worker's own chores tell of no job: counted as known, not shown, apart from what no dialect understands.
    expect(store.unmapped()).toEqual([]);
    expect(store.unshown()).toEqual([{ dialect: "bullmq", names: 3, count: 4, lastAt: expect.any(Number) }]);
  });

  it("fails twice, then succeeds (attempts: 3): completed, 3 attempts, each failure's reason in its step", () => {
    const { feed, jobs, steps } = aStore();
    feed(scenario("retry"));
    expect(jobs()).toEqual([expect.objectContaining({ service: "retry", state: "completed", attempt: 3, error: null, output: '{"done":"charge"}' })]);
    // A step and the one inside it may end in the same millisecond: their order among themselves is not said.
    expect(
      steps()
        .map((step) => step.name)
        .sort(),
    ).toEqual(["add", "completed", "process (attempt 1)", "process (attempt 2)", "process (attempt 3)", "retry later", "retry later"]);
    expect(
      steps()
        .map((step) => step.name)
        .filter((name) => name.startsWith("process")),
    ).toEqual(["process (attempt 1)", "process (attempt 2)", "process (attempt 3)"]);
    expect(steps().map((step) => step.summary)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^charge #1 failed: charge refused on attempt 1, \d+ ms$/),
        expect.stringMatching(/^charge #1 failed: charge refused on attempt 2, \d+ ms$/),
      ]),
    );
  });

  it("between attempts it is not over: queued again, waiting for its next attempt, with the failed attempt's reason", () => {
    const { feed, jobs, steps } = aStore();
    const exports = scenario("retry");
    // Cut after the first failure: its `delay` span put it back to delayed.
    feed(exports.slice(0, 3));
    expect(jobs()).toEqual([expect.objectContaining({ state: "queued", attempt: 1, error: "charge refused on attempt 1", finished_at: null })]);
    expect(steps().map((step) => step.summary)).toContainEqual(expect.stringMatching(/^charge #1 failed: charge refused on attempt 1, \d+ ms$/));
    feed(exports.slice(3, 4));
    expect(jobs()).toEqual([expect.objectContaining({ state: "queued", attempt: 2, error: "charge refused on attempt 2", finished_at: null })]);
    // Its third attempt's span comes as it ends (BullMQ's worker takes a job without a span of its own): completed.
    feed(exports.slice(4));
    expect(jobs()).toEqual([expect.objectContaining({ state: "completed", attempt: 3, error: null })]);
  });

  it("the same between attempts whatever order its spans arrive in: the latest of its requeue and its attempt's start says", () => {
    const { feed, jobs } = aStore();
    feed(scenario("retry").slice(0, 4).reverse());
    expect(jobs()).toEqual([expect.objectContaining({ state: "queued", attempt: 2, error: "charge refused on attempt 2" })]);
  });

  it("fails on every attempt (attempts: 2): failed for good, with its last reason and both attempts", () => {
    const { feed, jobs, steps } = aStore();
    feed(scenario("failed"));
    expect(jobs()).toEqual([expect.objectContaining({ service: "failed", state: "failed", attempt: 2, error: "render refused on attempt 2", output: null })]);
    expect(
      steps()
        .map((step) => step.name)
        .sort(),
    ).toEqual(["add", "failed", "process (attempt 1)", "process (attempt 2)", "retry later"]);
  });

  it("its worker killed while holding it: queued and stuck while nothing is heard; stalled, back to waiting, and completed by another worker", () => {
    const { file, feed, jobs, steps } = aStore();
    const exports = scenario("stalled");
    const now = Date.now();
    // The killed worker's exports: the job was added, and nothing more is heard of it.
    feed(exports.slice(0, 2), now);
    expect(jobs()).toEqual([expect.objectContaining({ service: "stalled", state: "queued" })]);
    const stuck = inspectTelemetry(file, 60_000, now + 120_000, { stuck: 10 });
    expect(stuck.stuckMessages.map((message) => message.stuck)).toEqual([
      expect.stringMatching(/^nothing received for 2m; last: add: archive #1 into stalled/),
    ]);
    // The worker that found it stalled, and processed it.
    feed(exports.slice(2), now + 120_000);
    expect(jobs()).toEqual([expect.objectContaining({ state: "completed", attempt: 1, error: null })]);
    expect(
      steps()
        .map((step) => step.name)
        .slice(0, 2),
    ).toEqual(["add", "stalled"]);
    expect(
      steps()
        .map((step) => step.name)
        .slice(2)
        .sort(),
    ).toEqual(["completed", "process (attempt 1)"]);
    expect(steps()[1]!.summary).toMatch(/^#1 its worker stopped holding it; back to waiting \(found by worker [0-9a-f-]+\)$/);
    expect(inspectTelemetry(file, 60_000, now + 121_000, { stuck: 10 }).stuck).toBe(0);
  });

  it("the same spans received again count once", () => {
    const { feed, jobs, steps } = aStore();
    const exports = scenario("retry");
    feed(exports);
    feed(exports);
    expect(jobs()).toHaveLength(1);
    expect(steps()).toHaveLength(7);
  });
});
