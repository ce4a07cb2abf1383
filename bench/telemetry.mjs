// `BENCH_ONLY=telemetry`: the dashboard's OTLP receiver under Claude Code-like exports (protobuf,
// 200 log records or spans each, many turns at once): 60 s at the target's 5,000 records a second
// with the dashboard's API measured meanwhile; then flat out on to 1,000,000 records beside a bare
// decode-and-insert of the same payloads, and the server's memory after; and how long a new turn
// takes from its export to the event stream's news of it (what an open page refetches on).
//
// Flat out against the bare floor, fairly: this machine's two cores are shared, and a bare rate
// measured once before the server started swung from 40,000 to 85,000 records a second between
// runs with the load other processes put on the machine (a quiet machine gave the most), and its
// first round ran slower than the rest (protobufjs's decoders not yet compiled). So the bare rate is
// measured in rounds taken between the receiver's slices (each slice of exports sent flat out, then
// the same payloads decoded and inserted bare), after a warm-up round that is not counted, and both
// are given as medians over the rounds: a change of load moves both alike. Each is also given in CPU
// time (records per CPU second: the server process's, read from /proc, against the bench process's
// own for the bare rounds), which contention barely moves; the server's includes what it does for
// the API polled meanwhile. The bare database is kept across the rounds, as the receiver's is, so
// both write into a store that grows, with its write-ahead log checkpointed as SQLite does by itself.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { exportBody, LogsRequest, PER_EXPORT, TracesRequest } from "./claudeCodeExports.mjs";
import { freePort, otelNews, startServer } from "./server.mjs";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3");
const SUSTAIN_MS = 60_000;
const TOTAL = 1_000_000;
/** The target's sustained rate. */
const PACED_RATE = 5000;
/**
 * The floor: the same payloads decoded (protobufjs, as the receiver does) and each record inserted as
 * a row, a transaction per export, into `db`. Its rate in records per second of wall time and per
 * second of this process's CPU time.
 */
function bareDecodeAndInsert(db, exports) {
  db.exec("CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, kind TEXT, name TEXT, at REAL, attributes TEXT)");
  const insert = db.prepare("INSERT INTO records (kind, name, at, attributes) VALUES (?, ?, ?, ?)");
  const started = performance.now();
  const cpu = process.cpuUsage();
  let records = 0;
  for (const { signal, body } of exports) {
    const type = signal === "logs" ? LogsRequest : TracesRequest;
    const message = type.toObject(type.decode(body), { longs: String, enums: Number, bytes: String });
    db.transaction(() => {
      for (const block of message.resourceLogs ?? message.resourceSpans) {
        for (const scope of block.scopeLogs ?? block.scopeSpans) {
          for (const record of scope.logRecords ?? scope.spans) {
            insert.run(
              signal,
              record.name ?? record.body?.stringValue ?? "",
              Number(record.timeUnixNano ?? record.startTimeUnixNano) / 1e6,
              JSON.stringify(record.attributes),
            );
            records++;
          }
        }
      }
    })();
  }
  const used = process.cpuUsage(cpu);
  return { rate: records / ((performance.now() - started) / 1000), cpuRate: records / ((used.user + used.system) / 1e6) };
}

/** A process's CPU time so far, in seconds (user and system, all its threads), from /proc. */
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
/** Linux's USER_HZ: the unit of /proc/<pid>/stat's times. */
const CLOCK_TICKS = 100;
/** Exports in a flat-out slice (50,000 records), each followed by a bare round of the same payloads. */
const SLICE_EXPORTS = 250;

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
  const bare = new Database(path.join(dir, "bare.db"));
  bare.pragma("journal_mode = WAL");
  bare.pragma("synchronous = NORMAL");
  // A warm-up round, not counted: the decoders compiled, the first pages of the file made.
  bareDecodeAndInsert(
    bare,
    Array.from({ length: SLICE_EXPORTS }, (_, i) => exportBody(9_000_000 + i)),
  );
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const server = await startServer(ROOT, dir, { REQWATCH_OTLP_PORT: String(otlpPort) });
  try {
    // The API while the receiver works: the requests table of the received turns, polled as a page would.
    let apiSamples = [];
    let loading = true;
    const poller = (async () => {
      while (loading) {
        const started = performance.now();
        await (await fetch(`${server.url}/api/requests?source=otel&limit=50`)).text();
        apiSamples.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    let n = 0;
    // First the target's load: 5,000 records a second, sustained for 60 s (an export every 40 ms,
    // two exporters), the API measured meanwhile.
    const pacedStart = performance.now();
    const pacedLanes = Array.from({ length: 2 }, async (_, lane) => {
      for (let k = 0; ; k++) {
        const due = pacedStart + (k * 2 + lane) * (PER_EXPORT / PACED_RATE) * 1000;
        if (due - pacedStart >= SUSTAIN_MS) return;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        await post(receiver, exportBody(n++));
      }
    });
    await Promise.all(pacedLanes);
    const pacedRate = (n * PER_EXPORT) / ((performance.now() - pacedStart) / 1000);
    const pacedApi = apiSamples;
    apiSamples = [];
    // Then as fast as it takes them, four exporters each sending as soon as it is answered, on to
    // 1,000,000 records, a slice at a time, each slice's payloads then decoded and inserted bare: the
    // most it keeps beside the floor, and its memory after.
    const slices = [];
    const bareRounds = [];
    while (n * PER_EXPORT < TOTAL) {
      const payloads = Array.from({ length: Math.min(SLICE_EXPORTS, TOTAL / PER_EXPORT - n) }, (_, i) => exportBody(n + i));
      n += payloads.length;
      let next = 0;
      const started = performance.now();
      const cpu = cpuSeconds(server.child.pid);
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < payloads.length) await post(receiver, payloads[next++]);
        }),
      );
      const records = payloads.length * PER_EXPORT;
      slices.push({ rate: records / ((performance.now() - started) / 1000), cpuRate: records / (cpuSeconds(server.child.pid) - cpu) });
      bareRounds.push(bareDecodeAndInsert(bare, payloads));
    }
    bare.close();
    loading = false;
    await poller;
    const rss = Number(fs.readFileSync(`/proc/${server.child.pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)[1]) / 1024;
    const rate = (rounds, key = "rate") => median(rounds.map((round) => round[key]));
    figure(`receiver at the target's load: records kept per second over 60 s`, pacedRate, "records/s", ">= 5000");
    summarize("dashboard API (a page of received turns) meanwhile", pacedApi, { target: "p99 <= 100 ms" });
    figure(`receiver flat out: records kept per second (median of ${slices.length} slices, 4 exporters)`, rate(slices), "records/s");
    figure(`bare decode + insert of the same payloads (median of ${bareRounds.length} rounds between)`, rate(bareRounds), "records/s");
    ratio("bare decode + insert rate / the receiver's flat out", rate(bareRounds) / rate(slices), { target: "<= 3" });
    figure("receiver flat out: records per CPU second of the server", rate(slices, "cpuRate"), "records/s");
    figure("bare decode + insert: records per CPU second", rate(bareRounds, "cpuRate"), "records/s");
    ratio("bare / receiver, in CPU time per record", rate(bareRounds, "cpuRate") / rate(slices, "cpuRate"));
    summarize("dashboard API while it receives flat out", apiSamples);
    figure(`server RSS after ${(n * PER_EXPORT).toLocaleString()} records`, rss, "MB", "<= 300");

    // Export received to the open page's news of it: a new turn's prompt, then the `sources` event naming it.
    const visible = [];
    const news = await otelNews(server.url);
    for (let i = 0; i < 40; i++) {
      const seen = news.next();
      const t0 = performance.now();
      await post(receiver, exportBody(5_000_000 + i * 2));
      visible.push((await seen) - t0);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await news.close();
    summarize("export received to the open page's news of it", visible, { target: "p95 <= 1000 ms" });
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
