import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { afterEach, describe, expect, it } from "vitest";
import { lifecycleIds } from "../../lib/otel/lifecycleSpans";
import { startOtelExport, type OtelExportHandle } from "../../lib/otel/otelExport";
import type { Reader } from "../../lib/roles/reader";
import { aClock } from "../helpers/clock";
import { aCollector, attr, waitFor, type OtlpSpan } from "../helpers/otlpCollector";
import { aRecording, tempParent } from "../helpers/stateDir";

const running: OtelExportHandle[] = [];

/** The exporter has sent every change of the tracker's feed (a step found nothing more): nothing else is on its way. */
const caughtUp = (handle: OtelExportHandle, reader: Reader) => {
  const status = handle.status();
  return status.lagMs === 0 && status.position?.seq === reader.feedLastSeq();
};
afterEach(async () => {
  await Promise.all(running.splice(0).map((handle) => handle.stop()));
});

describe("every request lifecycle as an OpenTelemetry trace", () => {
  it("a create span and a span per attempt, after the messaging conventions, with ids derived from the request", async () => {
    const collector = await aCollector();
    // No back-off: the retry is claimable at once.
    const { tracker, reader } = aRecording({ backoff: { baseMs: 0, capMs: 0, jitter: 0 } });
    tracker.create({ requestId: "ok-1", workspace: "chat", state: "queued", model: "claude-x" });
    const first = tracker.claimNext()!;
    tracker.complete("ok-1", first.token, { output: "done", tokens: 42 });
    // A retry: failed once (retryable), claimed again, completed; then a late result of the first claim, dropped.
    tracker.create({ requestId: "retry-1", workspace: "batch", state: "queued", maxAttempts: 3 });
    const a1 = tracker.claimNext()!;
    tracker.fail("retry-1", a1.token, "provider 529");
    const a2 = tracker.claimNext({ workspace: "batch" })!;
    expect(a2.request.requestId).toBe("retry-1");
    tracker.complete("retry-1", a2.token);
    expect(tracker.complete("retry-1", a1.token).outcome).toBe("dropped");

    running.push(startOtelExport(reader, { exporter: new OTLPTraceExporter({ url: collector.url }), pollMs: 50, metrics: false }));
    await waitFor(() => collector.spans().length >= 5);
    const spans = collector.spans();
    const ids = lifecycleIds({ requestId: "retry-1" });
    const ofRetry = spans.filter((span) => span.traceId === ids.traceId);
    expect(ofRetry.map((span) => [span.name, span.kind, span.spanId, span.parentSpanId ?? null])).toEqual([
      ["create batch", 4, ids.createSpanId, null],
      ["process batch", 5, ids.attemptSpanId(1), ids.createSpanId],
      ["process batch", 5, ids.attemptSpanId(2), ids.createSpanId],
    ]);
    const [, failed, done] = ofRetry as [OtlpSpan, OtlpSpan, OtlpSpan];
    expect([
      attr(failed, "messaging.system"),
      attr(failed, "messaging.destination.name"),
      attr(failed, "messaging.message.id"),
      attr(failed, "reqwatch.attempt"),
      attr(failed, "error.type"),
    ]).toEqual(["reqwatch", "batch", "retry-1", 1, "failed"]);
    expect(failed.status).toMatchObject({ code: 2, message: "provider 529" });
    expect(failed.events?.map((event) => event.name)).toEqual(["dropped: stale claim"]);
    expect(failed.links).toEqual([expect.objectContaining({ traceId: ids.traceId, spanId: ids.createSpanId })]);
    expect(attr(done, "error.type")).toBeUndefined();
    const ok = spans.find((span) => span.name === "process chat")!;
    expect([attr(ok, "gen_ai.request.model"), attr(ok, "gen_ai.usage.output_tokens")]).toEqual(["claude-x", 42]);
    expect(collector.resources()[0]!.attributes).toContainEqual({ key: "service.name", value: { stringValue: "reqwatch" } });
    tracker.close();
    await collector.close();
  });

  it("a collector down for a while, then the exporter restarted: every lifecycle arrives, once per id and content, from where it stopped", async () => {
    const collector = await aCollector();
    const { tracker, reader } = aRecording();
    const exporter = () => new OTLPTraceExporter({ url: collector.url, timeoutMillis: 1000 });
    let handle = startOtelExport(reader, { exporter: exporter(), pollMs: 50, metrics: false });
    running.push(handle);
    for (let i = 0; i < 20; i++) tracker.create({ requestId: `a${i}`, workspace: "w", state: "queued" });
    await waitFor(() => collector.spans().length === 20);
    collector.setDown(true);
    for (let i = 0; i < 20; i++) {
      const claim = tracker.claimNext()!;
      tracker.complete(claim.request.requestId, claim.token);
    }
    await waitFor(() => handle.status().lastError !== null);
    expect(collector.spans()).toHaveLength(20);
    // Stopped while the collector is down: its position is before the unsent changes.
    await handle.stop();
    running.splice(0);
    collector.setDown(false);
    handle = startOtelExport(reader, { exporter: exporter(), pollMs: 50, metrics: false });
    running.push(handle);
    // Caught up: every change of the feed has been sent, so nothing more is on its way.
    await waitFor(() => caughtUp(handle, reader));
    const byId = new Map<string, OtlpSpan[]>();
    for (const span of collector.spans()) byId.set(span.spanId, [...(byId.get(span.spanId) ?? []), span]);
    expect(byId.size).toBe(40);
    // A span sent twice is the same span.
    for (const copies of byId.values()) for (const copy of copies) expect(copy).toEqual(copies[0]);
    expect(handle.status()).toMatchObject({ lastError: null, lagMs: 0 });
    tracker.close();
    await collector.close();
  });

  it("metrics beside the traces: attempts by outcome, retries, dropped late results, process time and queue wait, and the queues and stuck now", async () => {
    const collector = await aCollector();
    const base = collector.url.replace(/\/v1\/traces$/, "");
    const { tracker, reader } = aRecording({ backoff: { baseMs: 0, capMs: 0, jitter: 0 } });
    tracker.create({ requestId: "m1", workspace: "mx", state: "queued" });
    const first = tracker.claimNext()!;
    tracker.fail("m1", first.token, "overloaded");
    const second = tracker.claimNext()!;
    tracker.complete("m1", second.token);
    tracker.complete("m1", first.token);
    tracker.create({ requestId: "m2", workspace: "mx", state: "queued" });
    const handle = startOtelExport(reader, {
      exporter: new OTLPTraceExporter({ url: collector.url }),
      pollMs: 50,
      metrics: { exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics` }), intervalMs: 200 },
    });
    running.push(handle);
    const metric = (name: string) =>
      collector
        .metrics()
        .filter((m) => m.name === name)
        .at(-1);
    await waitFor(() => metric("reqwatch.attempts") !== undefined && metric("reqwatch.deliveries.dropped") !== undefined, 10_000);
    const points = (name: string) =>
      (metric(name)?.sum ?? metric(name)?.gauge)!.dataPoints.map((point) => [
        Object.fromEntries(point.attributes.map((a) => [a.key, Object.values(a.value)[0]])),
        point.asInt ?? point.asDouble,
      ]);
    expect(points("reqwatch.attempts")).toEqual(
      expect.arrayContaining([
        [{ "messaging.destination.name": "mx", "reqwatch.outcome": "failed" }, 1],
        [{ "messaging.destination.name": "mx", "reqwatch.outcome": "completed" }, 1],
      ]),
    );
    expect(points("reqwatch.retries")).toEqual([[{ "messaging.destination.name": "mx" }, 1]]);
    expect(points("reqwatch.deliveries.dropped")).toEqual([[{ "messaging.destination.name": "mx" }, 1]]);
    expect(points("reqwatch.requests")).toEqual(expect.arrayContaining([[{ "messaging.destination.name": "mx", state: "queued" }, 1]]));
    expect(metric("messaging.process.duration")!.histogram!.dataPoints[0]).toMatchObject({ count: 2 });
    expect(metric("reqwatch.queue.wait")!.histogram!.dataPoints[0]).toMatchObject({ count: 2 });
    // Stopped while the collector still answers: its last export goes through at once.
    await handle.stop();
    running.splice(running.indexOf(handle), 1);
    tracker.close();
    await collector.close();
  });

  it("the protobuf encoding (the default) carries the same spans as JSON, decoded with the official protocol definitions", async () => {
    const [json, protobuf] = [await aCollector(), await aCollector()];
    const { tracker, reader } = aRecording();
    tracker.create({ requestId: "p1", workspace: "enc", state: "queued", model: "m" });
    const claim = tracker.claimNext()!;
    tracker.fail("p1", claim.token, "bad gateway", { retryable: false });
    const positions = tempParent();
    running.push(
      startOtelExport(reader, {
        exporter: new OTLPTraceExporter({ url: json.url }),
        positionFile: path.join(positions, "json.json"),
        pollMs: 50,
        metrics: false,
      }),
      startOtelExport(reader, {
        exporter: new ProtoTraceExporter({ url: protobuf.url }),
        positionFile: path.join(positions, "proto.json"),
        pollMs: 50,
        metrics: false,
      }),
    );
    await waitFor(() => json.spans().length === 2 && protobuf.spans().length === 2);
    expect(protobuf.encodings()).toEqual(["application/x-protobuf"]);
    expect(json.encodings()).toEqual(["application/json"]);
    const bySpan = (spans: OtlpSpan[]) => [...spans].sort((a, b) => a.spanId.localeCompare(b.spanId));
    // What a span says (these definitions predate the spans' `flags` field, and protobuf leaves out what is empty).
    const comparable = (span: OtlpSpan) => ({
      ids: [span.traceId, span.spanId, span.parentSpanId ?? null],
      name: span.name,
      kind: span.kind,
      times: [String(span.startTimeUnixNano), String(span.endTimeUnixNano)],
      attributes: span.attributes,
      events: (span.events ?? []).map((event) => event.name),
      links: (span.links ?? []).map((link) => [link.traceId, link.spanId]),
      status: span.status,
    });
    expect(bySpan(protobuf.spans()).map(comparable)).toEqual(bySpan(json.spans()).map(comparable));
    expect(protobuf.spans().find((span) => span.kind === 5)).toMatchObject({ name: "process enc", status: { code: 2, message: "bad gateway" } });
    tracker.close();
    await Promise.all([json.close(), protobuf.close()]);
  });

  it("a rebuilt index (another feed generation) is exported again from the files: the backend gets the same spans again, nothing new", async () => {
    const collector = await aCollector();
    const { tracker, reader } = aRecording();
    for (let i = 0; i < 5; i++) tracker.create({ requestId: `g${i}`, workspace: "gen", state: "queued" });
    const positionFile = path.join(tempParent(), "position.json");
    let handle = startOtelExport(reader, { exporter: new OTLPTraceExporter({ url: collector.url }), positionFile, pollMs: 50, metrics: false });
    await waitFor(() => collector.spans().length === 5);
    await handle.stop();
    const first = collector.spans();
    // As if the index had been rebuilt since: the position belongs to a feed that is gone.
    fs.writeFileSync(positionFile, JSON.stringify({ generation: "an-older-index", seq: 999 }));
    handle = startOtelExport(reader, { exporter: new OTLPTraceExporter({ url: collector.url }), positionFile, pollMs: 50, metrics: false });
    running.push(handle);
    // The collector has the spans a moment before the exporter's send returns and the re-export is counted.
    await waitFor(() => collector.spans().length === 10 && handle.status().reexports === 1);
    expect(handle.status()).toMatchObject({ reexports: 1, position: { generation: reader.generation() } });
    expect(collector.spans().slice(5)).toEqual(first);
    tracker.close();
    await collector.close();
  });

  it("a dead worker's request released by the monitor, one past its deadline timed out, and one a person cancelled: each attempt's span says so", async () => {
    const collector = await aCollector();
    // The monitor looks at a claim once its heartbeat is this old; its clock is moved past it by hand.
    const clock = aClock();
    const { tracker, reader, operator } = aRecording({ heartbeatTimeoutMs: 10, now: clock.now });
    tracker.create({ requestId: "orphan", workspace: "life", state: "queued", maxAttempts: 3 });
    // Claimed by a worker process that then dies.
    const child = spawnSync(process.execPath, [
      "-e",
      `require(${JSON.stringify(path.resolve(__dirname, "../../dist/index.cjs"))}).openTracker({ stateDir: ${JSON.stringify(reader.stateDir.root)} }).claimNext()`,
    ]);
    expect(child.status).toBe(0);
    tracker.create({ requestId: "late", workspace: "life", state: "queued" });
    const claim = tracker.claimNext({ workspace: "life" })!;
    expect(claim.request.requestId).toBe("late");
    tracker.update("late", { fields: { timeoutAt: clock.now() - 1000 } });
    // Later than the child's heartbeat (stamped by its own clock) by more than the timeout, whenever it ran.
    clock.set(Date.now() + 1000);
    expect(operator.monitorPass().counts).toMatchObject({ released: 1, deadlineTimedOut: 1 });
    // A person stops a running attempt.
    tracker.create({ requestId: "cancelled", workspace: "stop", state: "queued" });
    expect(tracker.claimNext({ workspace: "stop" })!.request.requestId).toBe("cancelled");
    expect(operator.cancel(["cancelled"]).cancelled).toHaveLength(1);
    running.push(startOtelExport(reader, { exporter: new OTLPTraceExporter({ url: collector.url }), pollMs: 50, metrics: false }));
    const attemptOf = (id: string) => collector.spans().find((span) => span.spanId === lifecycleIds({ requestId: id }).attemptSpanId(1));
    await waitFor(() => attemptOf("orphan") !== undefined && attemptOf("late") !== undefined && attemptOf("cancelled") !== undefined);
    expect([attr(attemptOf("orphan")!, "reqwatch.outcome"), attr(attemptOf("orphan")!, "error.type")]).toEqual(["released", "released"]);
    expect(attemptOf("orphan")!.status!.message).toMatch(/^released: the worker's pid \d+ is gone \(attempt 1 of 3\)$/);
    expect([attr(attemptOf("late")!, "reqwatch.outcome"), attr(attemptOf("late")!, "error.type")]).toEqual(["timed out", "timeout"]);
    expect([attr(attemptOf("cancelled")!, "reqwatch.outcome"), attr(attemptOf("cancelled")!, "error.type")]).toEqual(["stopped", "stopped"]);
    expect(attemptOf("cancelled")!.status).toMatchObject({ code: 2, message: "cancelled" });
    tracker.close();
    await collector.close();
  });

  it("from now: a first start with fromNow sends what changes after it, not the history the folder already holds", async () => {
    const collector = await aCollector();
    const { tracker, reader } = aRecording();
    for (let i = 0; i < 5; i++) tracker.create({ requestId: `old${i}`, workspace: "w", state: "queued" });
    const handle = startOtelExport(reader, { exporter: new OTLPTraceExporter({ url: collector.url }), pollMs: 50, metrics: false, fromNow: true });
    running.push(handle);
    await waitFor(() => handle.status().position !== null);
    tracker.create({ requestId: "new", workspace: "w", state: "queued" });
    await waitFor(() => caughtUp(handle, reader));
    expect(collector.spans().map((span) => span.spanId)).toEqual([lifecycleIds({ requestId: "new" }).createSpanId]);
    expect(handle.status().reexports).toBe(0);
    tracker.close();
    await collector.close();
  });

  it("a collector that takes the request and never answers: metric failures are reported too, and a stop still ends, not waiting for the export", async () => {
    const hung = http.createServer(() => {});
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    const { tracker, reader } = aRecording();
    tracker.create({ requestId: "h1", workspace: "hang", state: "queued" });
    const errors: string[] = [];
    const handle = startOtelExport(reader, {
      // An export that would wait far longer than the test may run: the stop ending at all shows it did not wait for it.
      exporter: new OTLPTraceExporter({ url: `${url}/v1/traces`, timeoutMillis: 60 * 60_000 }),
      pollMs: 50,
      metrics: { exporter: new OTLPMetricExporter({ url: `${url}/v1/metrics`, timeoutMillis: 300 }), intervalMs: 400 },
      onError: (error) => errors.push(error.message),
    });
    await waitFor(() => errors.some((message) => message.startsWith("metrics: ")), 10_000);
    await handle.stop();
    tracker.close();
    hung.closeAllConnections();
    hung.close();
  }, 60_000);
});
