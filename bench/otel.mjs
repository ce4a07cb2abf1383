// The OpenTelemetry export measured: with the dashboard running under 500 transitions/s, the
// server's CPU with the export against without it (the same load, in the same run) and the
// export's lag; then `reqwatch otel` under 100 transitions/s with its collector down for 60 s:
// every lifecycle after it returns, and how much the exporter's memory grew meanwhile.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort, startServer } from "./server.mjs";

/** An OTLP/HTTP receiver that counts distinct span ids (protobuf: it only counts requests; JSON: it reads the ids). */
async function aCollector() {
  const spanIds = new Set();
  let down = false;
  const port = await freePort();
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      if (down) return response.writeHead(503).end();
      if (request.url === "/v1/traces") {
        for (const match of Buffer.concat(chunks)
          .toString("utf8")
          .matchAll(/"spanId":"([0-9a-f]{16})"/g))
          spanIds.add(match[1]);
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spanIds,
    setDown: (value) => (down = value),
    close: () => new Promise((resolve) => (server.close(resolve), server.closeAllConnections())),
  };
}

/** The pid of the process that exports the folder: the one its holder file names, once it has written it. */
async function holderPid(storeDir) {
  const file = path.join(storeDir, "otel-position.json.holder");
  for (let i = 0; i < 300; i++) {
    try {
      return JSON.parse(fs.readFileSync(file, "utf8")).pid;
    } catch {
      await sleep(50);
    }
  }
  throw new Error("no exporter took the folder");
}

/** CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMB(pid) {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line.replace(/\D/g, "")) / 1024;
}

/** `perSecond` transitions a second for `seconds`: each request created queued, claimed, completed (three writes). */
async function load(tracker, perSecond, seconds, prefix) {
  const ids = [];
  const started = Date.now();
  let done = 0;
  while (Date.now() - started < seconds * 1000) {
    const due = Math.floor(((Date.now() - started) / 1000) * perSecond);
    while (done + 3 <= due) {
      const id = `${prefix}${ids.length}`;
      tracker.create({ requestId: id, workspace: `w${ids.length % 5}`, state: "queued" });
      const claim = tracker.claimNext({ workspace: `w${ids.length % 5}` });
      tracker.complete(claim.request.requestId, claim.token);
      ids.push(id);
      done += 3;
    }
    await sleep(5);
  }
  return ids;
}

export async function measureOtel({ ROOT, tempDir, openTracker, openRoles, summarize, ratio, median }) {
  const collector = await aCollector();
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_METRIC_EXPORT_INTERVAL: "10000" };
  try {
    // 1. The dashboard under 500 transitions/s for 20 s: without export, with --otel (its own
    // `reqwatch otel` child), and beside a `reqwatch otel` started by hand; three rounds of each,
    // interleaved (the machine is shared: one round alone drifts by points). The exporter's own
    // process is measured too, found by the holder file it writes.
    const cpu = { none: [], server: [], serverExporter: [], beside: [], besideExporter: [] };
    const lags = [];
    const modes = ["none", "server", "beside", "none", "server", "beside", "none", "server", "beside"];
    for (const [round, mode] of modes.entries()) {
      const stateDir = tempDir(`otel-${round}`);
      collector.spanIds.clear();
      const { tracker, reader } = openRoles({ stateDir });
      const server = await startServer(ROOT, stateDir, { ...env, ...(mode === "server" && { REQWATCH_OTEL: "1" }) });
      const beside =
        mode === "beside"
          ? spawn(process.execPath, [path.join(ROOT, "bin/reqwatch.js"), "otel", "--state-dir", stateDir], { env: { ...process.env, ...env }, stdio: "ignore" })
          : null;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const health = await (await fetch(`${server.url}/api/health`)).json();
          if (health.otel) lags.push(health.otel.lagMs);
          await sleep(250);
        }
      })();
      const exporterPid = mode === "none" ? null : await holderPid(reader.stateDir.storeDir);
      const before = cpuSeconds(server.child.pid);
      const exporterBefore = exporterPid ? cpuSeconds(exporterPid) : 0;
      const startedAt = Date.now();
      const ids = await load(tracker, 500, 20, `r${round}-`);
      const seconds = (Date.now() - startedAt) / 1000;
      cpu[mode].push(((cpuSeconds(server.child.pid) - before) / seconds) * 100);
      if (exporterPid) cpu[`${mode}Exporter`].push(((cpuSeconds(exporterPid) - exporterBefore) / seconds) * 100);
      if (mode !== "none") {
        const wanted = ids.length * 2;
        const deadline = Date.now() + 30_000;
        while (collector.spanIds.size < wanted && Date.now() < deadline) await sleep(100);
        if (collector.spanIds.size < wanted) throw new Error(`${mode}: ${collector.spanIds.size} of ${wanted} spans arrived`);
      }
      sampling = false;
      await sampler;
      beside?.kill("SIGTERM");
      await server.stop();
      tracker.close();
    }
    summarize("otel: export lag under 500 transitions/s, dashboard --otel (sampled every 250 ms)", lags, { target: "p95 <= 2 s" });
    summarize("otel: dashboard server CPU under 500 transitions/s, without export (% of a core, not ms)", cpu.none);
    summarize("otel: dashboard server CPU under 500 transitions/s, with --otel (% of a core, not ms)", cpu.server);
    ratio("otel: dashboard server CPU with --otel / without", median(cpu.server) / median(cpu.none), { target: "<= 1.05" });
    summarize("otel: the --otel exporter's own process (% of a core, not ms)", cpu.serverExporter);
    summarize("otel: dashboard server CPU under 500 transitions/s, reqwatch otel beside it (% of a core, not ms)", cpu.beside);
    ratio("otel: dashboard server CPU with reqwatch otel beside it / without", median(cpu.beside) / median(cpu.none), { target: "<= 1.05" });
    summarize("otel: the reqwatch otel process beside it (% of a core, not ms)", cpu.besideExporter);

    // 2. `reqwatch otel` under 100 transitions/s, its collector down for 60 s of it.
    collector.spanIds.clear();
    const stateDir = tempDir("otel-down");
    const tracker = openTracker({ stateDir });
    const exporter = spawn(process.execPath, [path.join(ROOT, "bin/reqwatch.js"), "otel", "--state-dir", stateDir], {
      env: { ...process.env, ...env },
      stdio: "ignore",
    });
    await sleep(1500);
    const rssBefore = rssMB(exporter.pid);
    let peak = rssBefore;
    const watch = setInterval(() => (peak = Math.max(peak, rssMB(exporter.pid))), 500);
    const first = await load(tracker, 100, 5, "d");
    collector.setDown(true);
    const during = await load(tracker, 100, 60, "e");
    collector.setDown(false);
    const recoveredFrom = Date.now();
    const after = await load(tracker, 100, 5, "f");
    const wanted = (first.length + during.length + after.length) * 2;
    while (collector.spanIds.size < wanted && Date.now() - recoveredFrom < 120_000) await sleep(200);
    clearInterval(watch);
    const caughtUpMs = Date.now() - recoveredFrom;
    exporter.kill("SIGTERM");
    tracker.close();
    summarize("otel: collector down 60 s under 100 transitions/s: spans missing after it returned (count, not ms)", [wanted - collector.spanIds.size], {
      target: "0",
    });
    summarize("otel: collector down 60 s: time from its return until every span arrived", [caughtUpMs]);
    summarize("otel: collector down 60 s: exporter memory growth (MB, not ms)", [peak - rssBefore], { target: "<= 50 MB" });
  } finally {
    await collector.close();
  }
}
