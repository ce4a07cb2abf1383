// What a hostile or broken client costs, each beside a baseline in the same run:
// `BENCH_ONLY=bigexport`: exports announcing 1,000,000 log records in a few KB of gzip, sent to the
// dashboard's receiver: the time until its 413, its RSS before and after, and that the export sent
// next is kept; beside a Claude Code-like export of 1,000 records, answered and kept.
// `BENCH_ONLY=mcpflood`: `reqwatch mcp` sent 20,000 list_requests calls by an agent that never reads
// its stdout: the server's RSS while the answers wait unread (it stops reading its input, lib/mcp/
// stdioTransport.ts), beside its RSS idle, and that every call is answered once the agent reads.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import zlib from "node:zlib";
import { exportBody, LogsRequest } from "./claudeCodeExports.mjs";
import { freePort, startServer } from "./server.mjs";

/** The resident memory of a process now, in MB, from /proc. */
function rssMb(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;
}

/** CPU time (user + system) a process has used so far, in clock ticks, from /proc. */
function cpuTicks(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** A figure that is not a time: a size or a count. */
function figure(rows, name, value, unit, target) {
  rows.push({ name, value: Math.round(value), unit, ...(target && { target }) });
  console.log(`${name.padEnd(56)} ${String(Math.round(value)).padStart(8)} ${unit}${target ? `   target ${target}` : ""}`);
}

/** Million-record exports sent, one at a time, each followed by an ordinary one; RSS is given after a third of them and after all. */
const BOMBS = 30;
const BASELINE_EXPORTS = 20;

/** A logs export of a million records of a time each: 11 MB of protobuf, as tests/integration/otlpReceiver.test.ts sends it. */
function aMillionRecords() {
  const record = Buffer.from([0x12, 9, 0x09, ...Buffer.alloc(8, 1)]);
  const varint = (n) => {
    const bytes = [];
    for (; n > 0x7f; n >>>= 7) bytes.push((n & 0x7f) | 0x80);
    bytes.push(n);
    return Buffer.from(bytes);
  };
  const lengthDelimited = (field, bytes) => Buffer.concat([Buffer.from([(field << 3) | 2]), varint(bytes.length), bytes]);
  return lengthDelimited(1, lengthDelimited(2, Buffer.concat(Array.from({ length: 1_000_000 }, () => record))));
}

/** A Claude Code-like logs export of 1,000 records: five of claudeCodeExports' 200 in one. */
function aThousandRecords(n) {
  const logRecords = [0, 2, 4, 6, 8].flatMap((k) => LogsRequest.decode(exportBody(n + k).body).resourceLogs[0].scopeLogs[0].logRecords);
  const first = LogsRequest.decode(exportBody(n).body);
  first.resourceLogs[0].scopeLogs[0].logRecords = logRecords;
  return Buffer.from(LogsRequest.encode(first).finish());
}

async function post(receiver, body, headers = {}) {
  const started = performance.now();
  const response = await fetch(`${receiver}/v1/logs`, { method: "POST", body, headers: { "content-type": "application/x-protobuf", ...headers } });
  const text = await response.text();
  return { status: response.status, text, ms: performance.now() - started };
}

export async function measureBigExport({ ROOT, tempDir, summarize, ratio, median, rows }) {
  console.log("\nexports announcing a million records each, to the dashboard's receiver...");
  const dir = tempDir("bigexport");
  const bomb = zlib.gzipSync(aMillionRecords());
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const server = await startServer(ROOT, dir, { REQWATCH_OTLP_PORT: String(otlpPort) });
  try {
    // Kept: the store's count of log records received (the health page's intake) grows by the export's records.
    const keptRecords = async () =>
      (await (await fetch(`${server.url}/api/health`)).json()).telemetry.intake.find((row) => row.signal === "logs")?.records ?? 0;
    const kept = async (body) => {
      const before = await keptRecords();
      const answer = await post(receiver, body);
      if (answer.status !== 200) throw new Error(`the receiver answered ${answer.status}: ${answer.text}`);
      for (let i = 0; (await keptRecords()) !== before + 1000; i++) {
        if (i > 300) throw new Error("the export was answered but its records were not kept");
        await sleep(20);
      }
      return answer.ms;
    };
    // A warm-up export, not counted: the receiver's decoders compiled, the store's first pages made.
    await kept(aThousandRecords(0));
    const baseline = [];
    for (let i = 1; i <= BASELINE_EXPORTS; i++) baseline.push(await kept(aThousandRecords(i * 10)));
    const rssBefore = rssMb(server.child.pid);
    const refused = [];
    const next = [];
    const rssAfter = [];
    for (let i = 0; i < BOMBS; i++) {
      const answer = await post(receiver, bomb, { "content-encoding": "gzip" });
      if (answer.status !== 413) throw new Error(`a million records were answered ${answer.status}: ${answer.text}`);
      refused.push(answer.ms);
      next.push(await kept(aThousandRecords(1000 + i * 10)));
      rssAfter.push(rssMb(server.child.pid));
    }
    summarize("receiver: an export of 1,000 records, answered (baseline)", baseline);
    summarize(`receiver: a million records in ${Math.round(bomb.length / 1024)} KB of gzip, until the 413`, refused);
    summarize("receiver: the export sent after each, answered and kept", next);
    figure(rows, "receiver: server RSS before the million-record exports", rssBefore, "MB");
    for (const after of [BOMBS / 3, BOMBS]) figure(rows, `receiver: server RSS after ${after} of them`, rssAfter[after - 1], "MB", "<= 300");
    figure(rows, "receiver: the most server RSS seen after one", Math.max(...rssAfter), "MB");
    // What V8 gives back once the server is idle: the bodies inflated to count were garbage, not kept.
    await sleep(10_000);
    figure(rows, "receiver: server RSS 10 s after the last", rssMb(server.child.pid), "MB");
    ratio("receiver: the 413, p50 / a 1,000-record export's, p50", median(refused) / median(baseline));
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const FLOOD_CALLS = 20_000;
/** Samples of the server's CPU time a second apart that must show no change before it counts as waiting. */
const STILL_SAMPLES = 5;

export async function measureMcpFlood({ ROOT, writeFiles, tempDir, openTracker, rows }) {
  console.log(`\n${FLOOD_CALLS.toLocaleString()} list_requests calls to reqwatch mcp, its answers unread...`);
  const stateDir = tempDir("mcpflood");
  writeFiles(stateDir, 1000);
  openTracker({ stateDir, recover: false }).close();
  const child = spawn(process.execPath, [path.join(ROOT, "bin/reqwatch.js"), "mcp"], {
    env: { ...process.env, REQWATCH_STATE_DIR: stateDir },
    stdio: ["pipe", "pipe", "ignore"],
  });
  try {
    const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    // The agent's handshake, read as an agent reads it.
    let seen = "";
    const answered = (id) =>
      new Promise((resolve) => {
        const look = (chunk) => {
          seen += chunk;
          if (seen.includes(`"id":${id}`)) {
            child.stdout.off("data", look);
            child.stdout.pause();
            resolve();
          }
        };
        child.stdout.on("data", look).resume();
      });
    send({ id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench-agent", version: "1.0.0" } } });
    await answered(0);
    send({ method: "notifications/initialized" });
    send({ id: 1, method: "tools/call", params: { name: "list_requests", arguments: { limit: 50 } } });
    await answered(1);
    await sleep(2000);
    const idle = rssMb(child.pid);
    // The flood: every call written as fast as the pipe takes it, and no answer read.
    let written = 0;
    const writing = (async () => {
      for (let id = 2; id < FLOOD_CALLS + 2; id++) {
        if (!send({ id, method: "tools/call", params: { name: "list_requests", arguments: { limit: 50 } } }))
          await new Promise((resolve) => child.stdin.once("drain", resolve));
        written++;
      }
    })();
    // Until the server waits (no CPU used for STILL_SAMPLES seconds): its output full, its input paused.
    let peak = idle;
    for (let still = 0, last = cpuTicks(child.pid); still < STILL_SAMPLES;) {
      await sleep(1000);
      peak = Math.max(peak, rssMb(child.pid));
      const now = cpuTicks(child.pid);
      still = now === last ? still + 1 : 0;
      last = now;
    }
    const waiting = rssMb(child.pid);
    const writtenWhileUnread = written;
    // The agent reads at last: every call is answered.
    let answers = 0;
    let rest = "";
    const allAnswered = new Promise((resolve) => {
      child.stdout.on("data", (chunk) => {
        const lines = (rest + chunk).split("\n");
        rest = lines.pop();
        answers += lines.length;
        peak = Math.max(peak, rssMb(child.pid));
        if (answers >= FLOOD_CALLS) resolve();
      });
    });
    child.stdout.resume();
    await Promise.all([writing, allAnswered]);
    figure(rows, "reqwatch mcp: RSS idle (baseline)", idle, "MB");
    figure(
      rows,
      `reqwatch mcp: RSS with its answers unread (${writtenWhileUnread.toLocaleString()} of ${FLOOD_CALLS.toLocaleString()} calls sent)`,
      waiting,
      "MB",
      "bounded",
    );
    figure(rows, `reqwatch mcp: the most RSS seen, to the ${FLOOD_CALLS.toLocaleString()}th answer read`, peak, "MB");
    figure(rows, "reqwatch mcp: calls answered once read", answers, "answers", String(FLOOD_CALLS));
  } finally {
    child.kill("SIGKILL");
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}
