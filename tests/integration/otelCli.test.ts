import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lifecycleIds } from "../../lib/otel/lifecycleSpans";
import { runCli } from "../helpers/cli";
import { aCollector, waitFor } from "../helpers/otlpCollector";
import { aTracker } from "../helpers/stateDir";

const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");

function startOtel(stateDir: string, endpoint: string): ChildProcess {
  return spawn(process.execPath, [BIN, "otel", "--state-dir", stateDir], {
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "gateway-test", OTEL_EXPORTER_OTLP_HEADERS: "x-team=gateway,authorization=Bearer%20secret" },
    stdio: ["ignore", "ignore", "pipe"],
  });
}

const exited = (child: ChildProcess) => new Promise((resolve) => child.once("exit", resolve));

describe("reqwatch otel", () => {
  it("killed with SIGKILL mid-stream and started again: every lifecycle arrives, none missing", async () => {
    const collector = await aCollector();
    const tracker = aTracker();
    const endpoint = collector.url.replace(/\/v1\/traces$/, "");
    let otel = startOtel(tracker.stateDir.root, endpoint);
    for (let i = 0; i < 200; i++) tracker.create({ requestId: `r${i}`, workspace: "kill", state: "queued" });
    await waitFor(() => collector.spans().length > 0, 15_000);
    // Mid-stream: claims and completions are being written while it dies.
    for (let i = 0; i < 100; i++) {
      const claim = tracker.claimNext()!;
      tracker.complete(claim.request.requestId, claim.token);
      if (i === 30) otel.kill("SIGKILL");
    }
    await exited(otel);
    otel = startOtel(tracker.stateDir.root, endpoint);
    const wanted = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const ids = lifecycleIds({ requestId: `r${i}` });
      wanted.add(ids.createSpanId);
      if (tracker.get(`r${i}`)!.state === "completed") wanted.add(ids.attemptSpanId(1));
    }
    expect(wanted.size).toBe(300);
    await waitFor(() => [...wanted].every((id) => collector.spans().some((span) => span.spanId === id)), 20_000);
    expect(collector.resources()[0]!.attributes).toContainEqual({ key: "service.name", value: { stringValue: "gateway-test" } });
    // The standard headers variable reaches the collector (an API key, say).
    expect(collector.headers()).toMatchObject({ "x-team": "gateway", authorization: "Bearer secret" });
    otel.kill("SIGTERM");
    expect(await exited(otel)).toBe(0);
    tracker.close();
    await collector.close();
  }, 60_000);

  it("wrong settings: a protocol it does not speak is said, and nothing starts", () => {
    const tracker = aTracker();
    const result = runCli(["otel", "--state-dir", tracker.stateDir.root], { env: { ...process.env, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } });
    expect(result).toMatchObject({ code: 1, stderr: expect.stringContaining("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: reqwatch exports over HTTP; use http/protobuf (the default) or http/json.") });
    tracker.close();
  });
});
