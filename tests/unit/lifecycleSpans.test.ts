import { context, trace, TraceFlags } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { emptyResource } from "@opentelemetry/resources";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lifecycleIds, lifecycleSpans } from "../../lib/otel/lifecycleSpans";
import { parseTraceparent } from "../../lib/model/traceparent";
import { runCli } from "../helpers/cli";
import { aRecording, aTracker } from "../helpers/stateDir";
import { thrown } from "../helpers/thrown";

const PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("a request's trace context", () => {
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => void context.setGlobalContextManager(manager.enable()));
  afterAll(() => {
    context.disable();
    manager.disable();
  });

  it("a request created with a traceparent joins that trace: its create span is a child of the given span", () => {
    const tracker = aTracker();
    const request = tracker.create({ requestId: "joined", workspace: "w", state: "queued", traceparent: PARENT });
    expect(request.traceparent).toBe(PARENT);
    const [create] = lifecycleSpans(request, emptyResource(), { name: "test" });
    expect(create!.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(create!.parentSpanContext).toMatchObject({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", isRemote: true });
    // Without one: a trace of its own, the same every time.
    const alone = tracker.create({ requestId: "alone", workspace: "w" });
    expect(lifecycleSpans(alone, emptyResource(), { name: "test" })[0]!.spanContext().traceId).toBe(lifecycleIds({ requestId: "alone" }).traceId);
    expect(lifecycleSpans(alone, emptyResource(), { name: "test" })[0]!.parentSpanContext).toBeUndefined();
    expect(thrown(() => tracker.create({ requestId: "bad", workspace: "w", traceparent: "00-0000-1111-01" }))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("must be a W3C traceparent"),
    });
    expect(parseTraceparent(`00-${"0".repeat(32)}-00f067aa0ba902b7-01`)).toBeNull();
    tracker.close();
  });

  it("created inside an instrumented gateway's span, the library picks the span up by itself", () => {
    const tracker = aTracker();
    const span = trace.wrapSpanContext({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: TraceFlags.SAMPLED });
    const request = context.with(trace.setSpan(context.active(), span), () => tracker.create({ requestId: "inside", workspace: "w" }));
    expect(request.traceparent).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    expect(tracker.create({ requestId: "outside", workspace: "w" }).traceparent).toBeUndefined();
    tracker.close();
  });

  it("the CLI takes it as --traceparent, or from TRACEPARENT in its environment", () => {
    const { tracker, reader } = aRecording();
    const root = reader.stateDir.root;
    expect(JSON.parse(runCli(["create", "-w", "w", "--id", "flag", "--traceparent", PARENT, "--json"], { stateDir: root }).stdout)).toMatchObject({
      traceparent: PARENT,
    });
    expect(
      JSON.parse(runCli(["create", "-w", "w", "--id", "env", "--json"], { stateDir: root, env: { ...process.env, TRACEPARENT: PARENT } }).stdout),
    ).toMatchObject({ traceparent: PARENT });
    expect(runCli(["create", "-w", "w", "--traceparent", "nope"], { stateDir: root })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("'--traceparent <value>' argument 'nope' is invalid. not a W3C traceparent"),
    });
    expect(runCli(["create", "-w", "w"], { stateDir: root, env: { ...process.env, TRACEPARENT: "nope" } })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("TRACEPARENT=nope: not a W3C traceparent"),
    });
    tracker.close();
  });

  it("a retried failure keeps its error on its attempt's span, and the create span does not move with the retry", () => {
    const { tracker, operator } = aRecording();
    tracker.create({ requestId: "again", workspace: "w", state: "queued" });
    tracker.transition("again", "processing");
    tracker.transition("again", "failed", { fields: { error: "boom" } });
    const before = lifecycleSpans(tracker.get("again")!, emptyResource(), { name: "test" });
    operator.retry({ ids: ["again"] });
    tracker.transition("again", "processing");
    tracker.transition("again", "completed");
    const [create, first, second] = lifecycleSpans(tracker.get("again")!, emptyResource(), { name: "test" });
    expect(first!.status).toEqual({ code: 2, message: "boom" });
    expect(create!.endTime).toEqual(before[0]!.endTime);
    expect(first).toMatchObject({ endTime: before[1]!.endTime, attributes: before[1]!.attributes });
    expect(second!.status).toEqual({ code: 0 });
    tracker.close();
  });
});
