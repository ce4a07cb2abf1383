import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import zlib from "node:zlib";
import Database from "better-sqlite3";
import protobuf from "protobufjs/light";
import { afterEach, describe, expect, it } from "vitest";
import descriptor from "../../lib/telemetry/otlp/descriptor.json";
import { MAX_RECORDS_PER_EXPORT } from "../../lib/telemetry/otlp/decode";
import { MAX_BODY_BYTES, startOtlpReceiver, type ReceiverHandle } from "../../lib/telemetry/otlpReceiver";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { eventually } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { NO_REDACTION } from "../helpers/claudeCodeExports";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";

// The OTLP/HTTP receiver on a real port, as an exporter (or an attacker) reaches it, answering as the
// OTLP specification says, and what it keeps checked in its store.
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/claude-code-2.1.332");
const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const TraceResponse = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse");
const open: { receiver: ReceiverHandle; store: TelemetryStore }[] = [];

afterEach(async () => {
  for (const { receiver, store } of open.splice(0)) {
    await receiver.close();
    store.close();
  }
});

async function aReceiver() {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: 86_400_000, maxBytes: 200e6 });
  const receiver = await startOtlpReceiver((signal, decoded) => ingestExport(store, NO_REDACTION, signal, decoded), { port: 0 });
  open.push({ receiver, store });
  const { port } = new URL(receiver.status().url!);
  const rows = () => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT state, prompt, calls FROM lifecycles ORDER BY seq").all();
    } finally {
      db.close();
    }
  };
  return { file, store, port: Number(port), rows };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function post(port: number, pathname: string, body: Buffer | string, headers: Record<string, string> = {}, method = "POST"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        path: pathname,
        method,
        headers: { host: `127.0.0.1:${port}`, "content-type": "application/x-protobuf", ...headers },
        setHost: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** A protobuf varint. */
function varint(value: number): Buffer {
  const bytes: number[] = [];
  for (; value > 0x7f; value = Math.floor(value / 128)) bytes.push((value & 0x7f) | 0x80);
  bytes.push(value);
  return Buffer.from(bytes);
}

const tracesProtobuf = () => zlib.gunzipSync(fs.readFileSync(path.join(FIXTURES, "tool-protobuf/0001-traces.pb.gz")));
const logsJson = () => fs.readFileSync(path.join(FIXTURES, "tool/0002-logs.json"));

describe("the OTLP/HTTP receiver", () => {
  it("takes protobuf and JSON, gzip or not, and answers each in its own encoding", async () => {
    const { port, rows } = await aReceiver();
    const protobufAnswer = await post(port, "/v1/traces", zlib.gzipSync(tracesProtobuf()), { "content-encoding": "gzip" });
    expect(protobufAnswer.status).toBe(200);
    expect(protobufAnswer.headers["content-type"]).toBe("application/x-protobuf");
    expect(TraceResponse.toObject(TraceResponse.decode(protobufAnswer.body))).toEqual({});
    const jsonAnswer = await post(port, "/v1/logs", logsJson(), { "content-type": "application/json" });
    expect(jsonAnswer).toMatchObject({ status: 200, headers: { "content-type": "application/json" } });
    expect(JSON.parse(jsonAnswer.body.toString())).toEqual({});
    expect(rows()).toHaveLength(2);
  });

  it("keeps what it can of an export, and says in partial_success what it rejected and why", async () => {
    const { port } = await aReceiver();
    const body = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { traceId: "not hex", spanId: "0011", name: "no ids", startTimeUnixNano: "1764000000000000000" },
                { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", name: "fine", startTimeUnixNano: "1764000000000000000" },
              ],
            },
          ],
        },
      ],
    };
    const answer = await post(port, "/v1/traces", JSON.stringify(body), { "content-type": "application/json" });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toEqual({ partialSuccess: { rejectedSpans: "1", errorMessage: "a span without a valid trace or span id" } });
  });

  it("refuses what is not an export with 400, and what it refused harms nothing else received", async () => {
    const { port, rows } = await aReceiver();
    await post(port, "/v1/logs", logsJson(), { "content-type": "application/json" });
    const before = rows();
    const truncated = tracesProtobuf().subarray(0, 200);
    const answer = await post(port, "/v1/traces", truncated);
    expect(answer.status).toBe(400);
    expect(answer.body.toString()).toContain("Not an OTLP ExportTraceServiceRequest in protobuf");
    const notJson = await post(port, "/v1/traces", "{ not json", { "content-type": "application/json" });
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.body.toString())).toMatchObject({ code: 3, message: expect.stringContaining("Not an OTLP ExportTraceServiceRequest in JSON") });
    const notGzip = await post(port, "/v1/traces", "plain text", { "content-encoding": "gzip" });
    expect(notGzip.status).toBe(400);
    expect(rows()).toEqual(before);
    expect((await post(port, "/v1/traces", tracesProtobuf())).status).toBe(200);
  });

  it("refuses more than it takes before reading it whole, and a gzip bomb without inflating it", async () => {
    const { port } = await aReceiver();
    // A 10 MB attribute, as sent: over the limit, said before the body is read.
    const huge = JSON.stringify({
      resourceLogs: [
        {
          scopeLogs: [
            { logRecords: [{ timeUnixNano: "1764000000000000000", attributes: [{ key: "big", value: { stringValue: "x".repeat(10 * 1024 * 1024) } }] }] },
          ],
        },
      ],
    });
    expect((await post(port, "/v1/logs", huge, { "content-type": "application/json" })).status).toBe(413);
    // The same, compressed: small on the wire, kept with the value cut.
    const compressed = await post(port, "/v1/logs", zlib.gzipSync(huge), { "content-type": "application/json", "content-encoding": "gzip" });
    expect(compressed.status).toBe(200);
    // 256 MB of zeros in a quarter of a megabyte: refused at the inflation limit.
    const bomb = zlib.gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 });
    expect(bomb.length).toBeLessThan(MAX_BODY_BYTES);
    const refused = await post(port, "/v1/traces", bomb, { "content-encoding": "gzip" });
    expect(refused.status).toBe(413);
    expect(refused.body.toString()).toContain("inflates past");
  });

  it("answers only an exporter on this machine: a browser's cross-site post, a foreign Host, another method, media type or encoding are refused", async () => {
    const { port, rows } = await aReceiver();
    const crossSite = await post(port, "/v1/traces", tracesProtobuf(), { origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    // A "simple" cross-site request (no preflight): text/plain with a browser's Origin.
    expect((await post(port, "/v1/logs", logsJson(), { origin: "https://evil.example", "content-type": "text/plain" })).status).toBe(403);
    expect((await post(port, "/v1/traces", tracesProtobuf(), { host: "evil.example:4318" })).status).toBe(403);
    expect((await post(port, "/v1/traces", tracesProtobuf(), { host: "127.0.0.1.evil.example" })).status).toBe(403);
    expect((await post(port, "/v1/logs", logsJson(), { "content-type": "text/plain" })).status).toBe(415);
    expect((await post(port, "/v1/traces", tracesProtobuf(), { "content-encoding": "br" })).status).toBe(415);
    const get = await post(port, "/v1/traces", "", {}, "GET");
    expect(get).toMatchObject({ status: 405, headers: { allow: "POST" } });
    expect((await post(port, "/v1/profiles", tracesProtobuf())).status).toBe(404);
    expect(rows()).toEqual([]);
  });

  it("says a failure in the request's format: a google.rpc.Status in JSON or protobuf, text to anything else (curl, a browser)", async () => {
    const { port } = await aReceiver();
    const json = await post(port, "/v1/logs", "{not json", { "content-type": "application/json" });
    expect(json).toMatchObject({ status: 400, headers: { "content-type": "application/json" } });
    expect(JSON.parse(json.body.toString())).toMatchObject({ code: 3, message: expect.any(String) });
    const protobuf = await post(port, "/v1/logs", Buffer.from([0xff, 0xff, 0xff]));
    expect(protobuf).toMatchObject({ status: 400, headers: { "content-type": "application/x-protobuf" } });
    expect(protobuf.body.subarray(0, 2)).toEqual(Buffer.from([0x08, 0x03]));
    // A GET from curl, a text/plain post and a request with no type read as a line of text, no stray bytes.
    for (const [method, headers, status] of [
      ["GET", { "content-type": "" }, 405],
      ["POST", { "content-type": "text/plain" }, 415],
      ["GET", { "content-type": "" }, 404],
    ] as const) {
      const answer = await post(port, status === 404 ? "/nowhere" : "/v1/traces", "", headers, method);
      expect(answer.status).toBe(status);
      expect(answer.headers["content-type"]).toBe("text/plain; charset=utf-8");
      expect(answer.body.toString()).toMatch(/^[\x20-\x7e]+\n$/);
    }
    expect((await post(port, "/v1/traces", "", { "content-type": "" }, "GET")).body.toString()).toBe("Send exports with POST, not GET.\n");
  });

  it("gives a stalled upload's slot back after the upload deadline (408, its connection closed): 32 stalled uploads do not lock every exporter out", async () => {
    const file = path.join(tempParent(), "telemetry.db");
    const store = new TelemetryStore(file, { keepMs: 86_400_000, maxBytes: 200e6 });
    // A short deadline, so the test waits on the receiver closing the stalled uploads, not on a clock.
    const receiver = await startOtlpReceiver((signal, decoded) => ingestExport(store, NO_REDACTION, signal, decoded), { port: 0, uploadDeadlineMs: 300 });
    open.push({ receiver, store });
    const port = Number(new URL(receiver.status().url!).port);
    const stalled = Array.from({ length: 32 }, () => {
      const request = http.request({
        host: "127.0.0.1",
        port,
        path: "/v1/traces",
        method: "POST",
        headers: { "content-type": "application/x-protobuf", "content-length": "100" },
      });
      const answered = new Promise<number>((resolve) => {
        request.on("response", (response) => {
          response.resume();
          resolve(response.statusCode!);
        });
        request.on("error", () => resolve(0));
      });
      request.write("x");
      return answered;
    });
    // Each stalled upload is answered 408 and let go, never left to hold its slot.
    expect(new Set(await Promise.all(stalled))).toEqual(new Set([408]));
    expect((await post(port, "/v1/traces", tracesProtobuf())).status).toBe(200);
  });

  it("refuses an export of more records than one may hold (413, saying the limit) after counting them, before decoding one, and takes the next", async () => {
    const { port, rows } = await aReceiver();
    // A million log records of a time each: 11 MB of protobuf, a few KB gzipped.
    const record = Buffer.from([0x12, 9, 0x09, ...Buffer.alloc(8, 1)]);
    const scope = Buffer.concat(Array.from({ length: 1_000_000 }, () => record));
    const lengthDelimited = (field: number, bytes: Buffer) => Buffer.concat([Buffer.from([(field << 3) | 2]), varint(bytes.length), bytes]);
    const body = lengthDelimited(1, lengthDelimited(2, scope));
    const protobufAnswer = await post(port, "/v1/logs", zlib.gzipSync(body), { "content-encoding": "gzip" });
    expect(protobufAnswer.status).toBe(413);
    // A google.rpc.Status: its message (field 2) says the limit.
    expect(protobufAnswer.body.toString("utf8")).toContain(`over the ${MAX_RECORDS_PER_EXPORT} one export may hold`);
    const json = JSON.stringify({
      resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: MAX_RECORDS_PER_EXPORT + 1 }, () => ({ timeUnixNano: "1" })) }] }],
    });
    const jsonAnswer = await post(port, "/v1/logs", json, { "content-type": "application/json" });
    expect(jsonAnswer.status).toBe(413);
    expect(JSON.parse(jsonAnswer.body.toString())).toMatchObject({
      message: `The export holds ${MAX_RECORDS_PER_EXPORT + 1} log records, over the ${MAX_RECORDS_PER_EXPORT} one export may hold: send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BLRP_MAX_EXPORT_BATCH_SIZE).`,
    });
    expect(rows()).toEqual([]);
    expect((await post(port, "/v1/logs", logsJson(), { "content-type": "application/json" })).status).toBe(200);
    expect(rows()).toHaveLength(1);
  });

  it("answers a full disk with 503 and Retry-After, which exporters retry, and keeps the export sent again once space is freed", async () => {
    const dir = tempParent();
    if (spawnSync("mount", ["-t", "tmpfs", "-o", "size=2048k", "tmpfs", dir]).status !== 0)
      throw new Error("the test needs to mount a tmpfs (root, as in CI here)");
    try {
      const file = path.join(dir, "telemetry.db");
      const store = new TelemetryStore(file, { keepMs: 86_400_000, maxBytes: 200e6 });
      const receiver = await startOtlpReceiver((signal, decoded) => ingestExport(store, NO_REDACTION, signal, decoded), { port: 0 });
      open.push({ receiver, store });
      const port = Number(new URL(receiver.status().url!).port);
      // What is left of the disk taken by another file.
      const filler = path.join(dir, "filler");
      try {
        fs.writeFileSync(filler, Buffer.alloc(4 * 1024 * 1024));
      } catch {
        // ENOSPC: the disk is full, as wanted.
      }
      const full = await post(port, "/v1/logs", logsJson(), { "content-type": "application/json" });
      expect(full.status).toBe(503);
      expect(full.headers["retry-after"]).toBeDefined();
      expect(JSON.parse(full.body.toString())).toMatchObject({ message: expect.stringContaining("The disk is full") });
      fs.rmSync(filler);
      expect((await post(port, "/v1/logs", logsJson(), { "content-type": "application/json" })).status).toBe(200);
      const db = new Database(file, { readonly: true });
      expect(db.prepare("SELECT count(*) FROM lifecycles").pluck().get()).toBe(1);
      db.close();
      await receiver.close();
      store.close();
      open.pop();
    } finally {
      spawnSync("umount", ["-l", dir]);
    }
  });

  it("survives a request target that is not a URL (an <img> on any page can send one): refused, and the next export is kept", async () => {
    const { port, rows } = await aReceiver();
    for (const target of ["//:99999/x.png", "//[::1/x", "http://[bad/v1/traces", "*"]) {
      expect((await post(port, target, "", {}, "GET")).status).toBe(404);
    }
    expect((await post(port, "/v1/logs", logsJson(), { "content-type": "application/json" })).status).toBe(200);
    expect(rows()).toHaveLength(1);
  });

  it("tells an exporter to come back later when too many exports are in flight (429) or the store is busy (503), with Retry-After", async () => {
    const { port, file } = await aReceiver();
    // 32 exports whose bodies have not ended: the 33rd is told to wait.
    const pending: http.ClientRequest[] = [];
    for (let i = 0; i < 32; i++) {
      const request = http.request({
        host: "127.0.0.1",
        port,
        path: "/v1/traces",
        method: "POST",
        headers: { "content-type": "application/x-protobuf", "content-length": "100" },
      });
      request.on("error", () => {});
      request.write("x");
      pending.push(request);
    }
    // Once the receiver has them all (until then, an export is taken as usual).
    const busy = await eventually(async () => {
      const answer = await post(port, "/v1/traces", tracesProtobuf());
      return answer.status === 429 ? answer : undefined;
    });
    expect(busy.headers["retry-after"]).toBe("1");
    for (const request of pending) request.destroy();
    // Another process holds the store's write lock past the receiver's busy wait.
    const holder = new Database(file);
    holder.exec("BEGIN EXCLUSIVE");
    try {
      // Once the abandoned exports are gone (429 until then).
      const locked = await eventually(async () => {
        const answer = await post(port, "/v1/traces", tracesProtobuf());
        return answer.status === 429 ? undefined : answer;
      }, 20_000);
      expect(locked).toMatchObject({ status: 503, headers: { "retry-after": "2" } });
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    expect((await post(port, "/v1/traces", tracesProtobuf())).status).toBe(200);
  }, 30_000);
});
