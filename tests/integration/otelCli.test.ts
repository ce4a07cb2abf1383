import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { describe, expect, it } from "vitest";
import { lifecycleIds } from "../../lib/otel/lifecycleSpans";
import { startOtelExport } from "../../lib/otel/otelExport";
import { runCli } from "../helpers/cli";
import { anAgent, call, closeAgents } from "../helpers/mcpAgent";
import { aCollector, waitFor } from "../helpers/otlpCollector";
import { aRecording } from "../helpers/stateDir";
import { eventually, freePort } from "../helpers/processes";
import { aDashboard } from "../helpers/dashboard";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";

const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");

function startOtel(stateDir: string, endpoint: string, protocol = "http/json"): ChildProcess {
  return spawn(process.execPath, [BIN, "otel", "--state-dir", stateDir], {
    env: {
      ...process.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: "gateway-test",
      OTEL_EXPORTER_OTLP_HEADERS: "x-team=gateway,authorization=Bearer%20secret",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
}

const exited = (child: ChildProcess) => new Promise((resolve) => child.once("exit", resolve));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("reqwatch otel", () => {
  it("into a dashboard's own receiver: the same lifecycles as the folder it exports, as messages of its workspaces", async () => {
    const { tracker: source, reader } = aRecording();
    source.create({ requestId: "done", workspace: "mail", state: "queued" });
    source.create({ requestId: "broken", workspace: "mail", state: "queued", maxAttempts: 1 });
    source.create({ requestId: "waiting", workspace: "mail", state: "queued" });
    const first = source.claimNext({ workspace: "mail" })!;
    source.complete(first.request.requestId, first.token);
    const second = source.claimNext({ workspace: "mail" })!;
    source.fail(second.request.requestId, second.token, "the mail server said no");
    const dashboard = await aDashboard({}, { port: 0, keepMs: 86_400_000, stuckAfterMs: 600_000 });
    const receiver = (await dashboard.runtime.telemetry!.ready).url!;
    const otel = startOtel(reader.stateDir.root, receiver, "http/protobuf");
    try {
      const rows = await eventually(async () => {
        const page = (await dashboard.ask("/api/requests?source=otel&workspace=mail")).json<RequestsView>();
        return page.items.length === 3 && page.items.every((item) => item.state !== "created") ? page.items : undefined;
      }, 20_000);
      // The folder's states, whatever the message ids became.
      const states = (ids: string[]) => ids.map((id) => source.get(id)!.state).sort();
      expect(rows.map((row) => row.state).sort()).toEqual(states(["done", "broken", "waiting"]));
      expect(rows.every((row) => row.requestId.startsWith("message-"))).toBe(true);
      const failed = rows.find((row) => row.state === "failed")!;
      const view = (await dashboard.ask(`/api/sources/otel/requests/${failed.requestId}`)).json<SourceRequestView>();
      expect(view.request.error).toBe("the mail server said no");

      // The CLI and an agent (MCP) read what the dashboard received for its state folder, read-only.
      const stateDir = dashboard.runtime.reader.stateDir.root;
      const listed = runCli(["list", "--source", "otel", "--workspace", "mail", "--json"], { stateDir });
      expect(listed.stderr).toBe("");
      expect((JSON.parse(listed.stdout) as { items: { requestId: string; state: string }[] }).items.map((item) => [item.requestId, item.state]).sort()).toEqual(
        rows.map((row) => [row.requestId, row.state]).sort(),
      );
      const summary = runCli(["source", "otel"], { stateDir });
      expect(summary).toMatchObject({ code: 0, stderr: "" });
      expect(summary.stdout).toContain(`otel: ${path.join(dashboard.runtime.reader.stateDir.storeDir, "telemetry.db")}, table lifecycles, read-only`);
      expect(summary.stdout).toMatch(/lifecycles: \d+ \(.*1 failed.*\); stuck: 0/);
      const answer = await call(await anAgent(stateDir), "source_queue", { source: "otel", all: true });
      expect(answer.isError).toBe(false);
      const queue = JSON.parse(answer.text) as { source: { kind: string }; messages: { requestId: string }[] };
      expect(queue.source.kind).toBe("otel");
      expect(queue.messages.map((message) => message.requestId)).toEqual(expect.arrayContaining(rows.map((row) => row.requestId)));
    } finally {
      otel.kill("SIGTERM");
      await exited(otel);
      await closeAgents();
      await dashboard.runtime.telemetry!.close();
    }
  }, 60_000);

  it("`otel` as a source: what a dashboard kept for the folder, or that nothing was received yet; the dashboard refuses it, since it shows its own", () => {
    const stateDir = aRecording().reader.stateDir.root;
    const none = runCli(["source", "otel"], { stateDir });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(
      /^reqwatch: Nothing was received for this state folder yet: the dashboard keeps what its OpenTelemetry receiver gets in .*telemetry\.db/,
    );
    const dashboard = runCli(["dashboard", "--source", "otel"], { stateDir });
    expect(dashboard.code).toBe(2);
    expect(dashboard.stderr).toContain("otel is not a source to name here: the dashboard shows what its OpenTelemetry receiver kept by itself");
    expect(runCli(["list", "--source", "otel?write=1"], { stateDir }).stderr).toContain("otel is read only");
  });

  it("killed with SIGKILL mid-stream and started again: every lifecycle arrives, none missing", async () => {
    const collector = await aCollector();
    const { tracker, reader } = aRecording();
    const endpoint = collector.url.replace(/\/v1\/traces$/, "");
    let otel = startOtel(reader.stateDir.root, endpoint);
    for (let i = 0; i < 200; i++) tracker.create({ requestId: `r${i}`, workspace: "kill", state: "queued" });
    await waitFor(() => collector.spans().length > 0, 15_000);
    // Mid-stream: claims and completions are being written while it dies.
    for (let i = 0; i < 100; i++) {
      const claim = tracker.claimNext()!;
      tracker.complete(claim.request.requestId, claim.token);
      if (i === 30) otel.kill("SIGKILL");
    }
    await exited(otel);
    otel = startOtel(reader.stateDir.root, endpoint);
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

  it("a second exporter on the folder waits for the first, says for which, and takes over from where it stopped when it dies", async () => {
    const collector = await aCollector();
    const { tracker, reader } = aRecording();
    const otel = startOtel(reader.stateDir.root, collector.url.replace(/\/v1\/traces$/, ""));
    for (let i = 0; i < 50; i++) tracker.create({ requestId: `q${i}`, workspace: "two", state: "queued" });
    await waitFor(() => collector.spans().length >= 50, 15_000);
    const waiting: (number | null)[] = [];
    const second = startOtelExport(reader, {
      exporter: new OTLPTraceExporter({ url: collector.url }),
      pollMs: 50,
      metrics: false,
      onWaiting: (holder) => waiting.push(holder?.pid ?? null),
    });
    try {
      await waitFor(() => second.status().waitingFor !== null);
      expect(second.status().waitingFor).toMatchObject({ pid: otel.pid });
      for (let i = 50; i < 60; i++) tracker.create({ requestId: `q${i}`, workspace: "two", state: "queued" });
      await waitFor(() => collector.spans().length >= 60, 15_000);
      // The first sent those; the second sent nothing.
      expect(second.status().exported).toBe(0);
      otel.kill("SIGKILL");
      await exited(otel);
      for (let i = 60; i < 70; i++) tracker.create({ requestId: `q${i}`, workspace: "two", state: "queued" });
      await waitFor(() => second.status().waitingFor === null && second.status().exported >= 10, 15_000);
      expect(waiting).toEqual([otel.pid, null]);
      const arrived = new Set(collector.spans().map((span) => span.spanId));
      for (let i = 0; i < 70; i++) expect(arrived.has(lifecycleIds({ requestId: `q${i}` }).createSpanId)).toBe(true);
      // It went on from the first one's position, not from the start: the ten new ones, and at most a step the first had sent but not yet saved.
      expect(second.status().reexports).toBe(0);
      expect(second.status().exported).toBeLessThan(60);
    } finally {
      await second.stop();
      tracker.close();
      await collector.close();
    }
  }, 60_000);

  it("a dashboard's --otel export runs in a reqwatch otel process of its own, which ends with the server however the server ends", async () => {
    const collector = await aCollector();
    const { tracker, reader } = aRecording();
    const server = spawn(process.execPath, [path.resolve(__dirname, "../../dist/server.cjs"), "--hostname", "127.0.0.1", "--port", String(await freePort())], {
      env: {
        ...process.env,
        REQWATCH_STATE_DIR: reader.stateDir.root,
        REQWATCH_OTEL: "1",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url.replace(/\/v1\/traces$/, ""),
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      },
      stdio: "ignore",
    });
    try {
      // The process that holds the export's position is the exporter: not the server.
      const holder = path.join(reader.stateDir.storeDir, "otel-position.json.holder");
      await waitFor(() => fs.existsSync(holder) && fs.readFileSync(holder, "utf8").endsWith("\n"), 30_000);
      const exporter = (JSON.parse(fs.readFileSync(holder, "utf8")) as { pid: number }).pid;
      expect(exporter).not.toBe(server.pid);
      tracker.create({ requestId: "seen", workspace: "w", state: "queued" });
      await waitFor(() => collector.spans().some((span) => span.spanId === lifecycleIds({ requestId: "seen" }).createSpanId), 15_000);
      server.kill("SIGKILL");
      await exited(server);
      await waitFor(() => !isAlive(exporter), 10_000);
    } finally {
      if (server.exitCode === null && server.signalCode === null) server.kill("SIGKILL");
      tracker.close();
      await collector.close();
    }
  }, 60_000);

  it("wrong settings: a protocol it does not speak, or an endpoint without its scheme, is a usage error that names the variable, and nothing starts", () => {
    const { tracker, reader } = aRecording();
    const grpc = runCli(["otel", "--state-dir", reader.stateDir.root], { env: { ...process.env, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } });
    expect(grpc).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: reqwatch exports over HTTP; use http/protobuf (the default) or http/json."),
    });
    const bare = runCli(["otel", "--state-dir", reader.stateDir.root], { env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" } });
    expect(bare).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("OTEL_EXPORTER_OTLP_ENDPOINT=localhost:4318: not an http(s) URL; write it with its scheme, e.g. http://localhost:4318."),
    });
    const dashboard = runCli(["dashboard", "--otel", "--state-dir", reader.stateDir.root], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318/v1/traces" },
    });
    expect(dashboard).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=collector:4318/v1/traces: not an http(s) URL"),
    });
    expect(fs.readdirSync(reader.stateDir.storeDir).filter((name) => name.startsWith("otel"))).toEqual([]);
    tracker.close();
  });
});
