// `BENCH_ONLY=telemetry`: the dashboard's OTLP receiver under a sustained load of Claude Code-like
// exports (protobuf, 200 log records or spans each, many turns at once), for 60 s and then on to
// 1,000,000 records: the records per second it keeps, beside a bare decode-and-insert of the same
// payloads in the same run; the dashboard's API meanwhile; the server's memory after; and how long
// a new turn takes from its export to the event stream's news of it (what an open page refetches on).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import protobuf from "protobufjs/light.js";
import { createParser } from "eventsource-parser";
import { freePort, startServer } from "./server.mjs";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3");
const descriptor = JSON.parse(fs.readFileSync(new URL("../lib/telemetry/otlp/descriptor.json", import.meta.url), "utf8"));
const root = protobuf.Root.fromJSON(descriptor);
const LogsRequest = root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest");
const TracesRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");

const PER_EXPORT = 200;
const SUSTAIN_MS = 60_000;
const TOTAL = 1_000_000;
const hex = (n, chars) => n.toString(16).padStart(chars, "0");
const nanos = (ms) => String(BigInt(Math.round(ms)) * 1_000_000n);
const attr = (key, value) => ({ key, value: typeof value === "number" ? (Number.isInteger(value) ? { intValue: value } : { doubleValue: value }) : { stringValue: String(value) } });
const RESOURCE = { attributes: [attr("service.name", "claude-code"), attr("service.version", "2.1.332")] };

/** Export `n` (of a stream of turns, each: a prompt, three calls, two tools, an answer) as protobuf: logs on even exports, spans on odd ones. */
function exportBody(n) {
  const now = Date.now();
  if (n % 2 === 0) {
    const records = [];
    for (let i = 0; i < PER_EXPORT; i++) {
      const step = n * PER_EXPORT + i;
      const turn = Math.floor(step / 8);
      const kind = ["user_prompt", "api_request", "tool_result", "api_request", "tool_result", "api_request", "assistant_response", "api_error"][step % 8];
      const attributes = [attr("session.id", `session-${Math.floor(turn / 20)}`), attr("prompt.id", `prompt-${turn}`), attr("event.name", kind), attr("event.sequence", step), attr("model", "claude-sonnet-4-5")];
      if (kind === "user_prompt") attributes.push(attr("prompt", `fix the failing test number ${turn} in the parser module`));
      if (kind === "api_request") attributes.push(attr("request_id", `req-${step}`), attr("input_tokens", 1200), attr("output_tokens", 300), attr("cost_usd", 0.0081), attr("duration_ms", 900));
      if (kind === "tool_result") attributes.push(attr("tool_name", "Bash"), attr("tool_use_id", `toolu-${step}`), attr("success", "true"), attr("duration_ms", "40"));
      if (kind === "api_error") attributes.push(attr("status_code", 529), attr("error", "Overloaded"), attr("attempt", 2), attr("request_id", `req-${step}`));
      if (kind === "assistant_response") attributes.push(attr("response", "Done: the parser test passes now."));
      records.push({ timeUnixNano: nanos(now), body: { stringValue: `claude_code.${kind}` }, attributes });
    }
    return { signal: "logs", body: Buffer.from(LogsRequest.encode(LogsRequest.fromObject({ resourceLogs: [{ resource: RESOURCE, scopeLogs: [{ scope: { name: "com.anthropic.claude_code.events" }, logRecords: records }] }] })).finish()) };
  }
  const spans = [];
  for (let i = 0; i < PER_EXPORT; i++) {
    const step = n * PER_EXPORT + i;
    const turn = Math.floor(step / 4);
    const traceId = Buffer.from(hex(turn, 32), "hex");
    const root = i % 4 === 0;
    spans.push({
      traceId,
      spanId: Buffer.from(hex(step + 1, 16), "hex"),
      ...(!root && { parentSpanId: Buffer.from(hex(turn * 4 + 1, 16), "hex") }),
      name: root ? "claude_code.interaction" : i % 4 === 3 ? "claude_code.tool" : "claude_code.llm_request",
      kind: 1,
      startTimeUnixNano: nanos(now - 1000),
      endTimeUnixNano: nanos(now),
      attributes: [attr("session.id", `session-${Math.floor(turn / 20)}`), attr("request_id", `span-req-${step}`), attr("model", "claude-sonnet-4-5"), attr("input_tokens", 1200), attr("output_tokens", 300), attr("tool_use_id", `span-tool-${step}`), attr("tool_name", "Read")],
      status: {},
    });
  }
  return { signal: "traces", body: Buffer.from(TracesRequest.encode(TracesRequest.fromObject({ resourceSpans: [{ resource: RESOURCE, scopeSpans: [{ scope: { name: "com.anthropic.claude_code.tracing" }, spans }] }] })).finish()) };
}

/** The floor: the same payloads decoded (protobufjs, as the receiver does) and each record inserted as a row, a transaction per export. */
function bareDecodeAndInsert(dir, exports) {
  const db = new Database(path.join(dir, "bare.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE records (id INTEGER PRIMARY KEY, kind TEXT, name TEXT, at REAL, attributes TEXT)");
  const insert = db.prepare("INSERT INTO records (kind, name, at, attributes) VALUES (?, ?, ?, ?)");
  const started = performance.now();
  let records = 0;
  for (const { signal, body } of exports) {
    const type = signal === "logs" ? LogsRequest : TracesRequest;
    const message = type.toObject(type.decode(body), { longs: String, enums: Number, bytes: String });
    db.transaction(() => {
      for (const block of message.resourceLogs ?? message.resourceSpans) {
        for (const scope of block.scopeLogs ?? block.scopeSpans) {
          for (const record of scope.logRecords ?? scope.spans) {
            insert.run(signal, record.name ?? record.body?.stringValue ?? "", Number(record.timeUnixNano ?? record.startTimeUnixNano) / 1e6, JSON.stringify(record.attributes));
            records++;
          }
        }
      }
    })();
  }
  db.close();
  return records / ((performance.now() - started) / 1000);
}

async function post(receiver, { signal, body }) {
  const response = await fetch(`${receiver}/v1/${signal}`, { method: "POST", body, headers: { "content-type": "application/x-protobuf" } });
  if (response.status !== 200) throw new Error(`the receiver answered ${response.status}: ${await response.text()}`);
}

export async function measureTelemetry({ ROOT, tempDir, summarize, ratio, median, rows }) {
  /** A figure that is not a time: a rate or a size. */
  const figure = (name, value, unit, target) => {
    rows.push({ name, value: Math.round(value), unit, ...(target && { target }) });
    console.log(`${name.padEnd(56)} ${String(Math.round(value)).padStart(8)} ${unit}${target ? `   target ${target}` : ""}`);
  };
  console.log("\nthe OTLP receiver under load (Claude Code-like exports, protobuf)...");
  const dir = tempDir("telemetry");
  const bareRates = [];
  for (let round = 0; round < 3; round++) {
    const payloads = Array.from({ length: 250 }, (_, i) => exportBody(100_000 + round * 1000 + i));
    bareRates.push(bareDecodeAndInsert(dir, payloads));
    fs.rmSync(path.join(dir, "bare.db"), { force: true });
  }
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const server = await startServer(ROOT, dir, { REQWATCH_OTLP_PORT: String(otlpPort) });
  try {
    // The API while the receiver works: the requests table of the received turns, polled as a page would.
    const apiSamples = [];
    let loading = true;
    const poller = (async () => {
      while (loading) {
        const started = performance.now();
        await (await fetch(`${server.url}/api/requests?source=otel&limit=50`)).text();
        apiSamples.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const sent = [];
    let n = 0;
    const started = performance.now();
    // Four exporters at once, each sending as fast as it is answered.
    const lanes = Array.from({ length: 4 }, async () => {
      while (n * PER_EXPORT < TOTAL) {
        const body = exportBody(n++);
        await post(receiver, body);
        sent.push(performance.now() - started);
      }
    });
    await Promise.all(lanes);
    loading = false;
    await poller;
    const within = (ms) => sent.filter((at) => at <= ms).length * PER_EXPORT;
    const sustainedRate = within(SUSTAIN_MS) / (Math.min(SUSTAIN_MS, sent.at(-1)) / 1000);
    const rss = Number(fs.readFileSync(`/proc/${server.child.pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)[1]) / 1024;
    figure("receiver: records kept per second, first 60 s (4 exporters)", sustainedRate, "records/s", ">= 5000");
    figure("bare decode + insert of the same payloads (median of 3)", median(bareRates), "records/s");
    ratio("bare decode + insert rate / the receiver's", median(bareRates) / sustainedRate, { target: "<= 3" });
    summarize("dashboard API (a page of received turns) while it receives", apiSamples, { target: "p99 <= 100 ms" });
    figure(`server RSS after ${TOTAL.toLocaleString()} records`, rss, "MB", "<= 300");

    // Export received to the open page's news of it: a new turn's prompt, then the `sources` event naming it.
    const visible = [];
    const events = await fetch(`${server.url}/api/events`, { headers: { accept: "text/event-stream" } });
    const reader = events.body.getReader();
    let waiting = null;
    const parser = createParser({
      onEvent: (event) => {
        if (event.event === "sources" && waiting && JSON.parse(event.data).changed.includes("otel")) waiting();
      },
    });
    const pump = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        parser.feed(new TextDecoder().decode(value));
      }
    })();
    for (let i = 0; i < 40; i++) {
      const seen = new Promise((resolve) => (waiting = resolve));
      const t0 = performance.now();
      await post(receiver, exportBody(5_000_000 + i * 2));
      await seen;
      visible.push(performance.now() - t0);
      waiting = null;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await reader.cancel();
    await pump.catch(() => {});
    summarize("export received to the open page's news of it", visible, { target: "p95 <= 1000 ms" });
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
