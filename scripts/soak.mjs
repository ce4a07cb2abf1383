// `npm run soak`: the dashboard under sustained load for a bounded time (SOAK_SECONDS, default 60):
// API clients polling, writer processes changing state, event-stream clients following the feed.
// Reports errors, API latency (p50/p99), whether every SSE client got every change in order, and
// the server's memory at the end. The short version runs in `npm test` (tests/e2e/soak.spec.ts).
// Beside it, so that a slow figure can be read: the latency of a server that does nothing, asked by
// the same clients at the same time (the floor this machine and this load set for any server), and
// where the machine's CPU time went. The event-stream clients run in a process of their own
// (scripts/soak/followers.mjs), so their parsing is not counted as API latency.
import { spawn, execFileSync } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { quantileSorted } from "simple-statistics";
import { startServer } from "../bench/server.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A process and all its descendants (the server may fork workers). */
function processTree(pid) {
  const pids = [];
  const visit = (p) => {
    pids.push(p);
    try {
      for (const task of fs.readdirSync(`/proc/${p}/task`)) {
        for (const child of fs.readFileSync(`/proc/${p}/task/${task}/children`, "utf8").split(" ").filter(Boolean)) visit(child);
      }
    } catch {
      // Gone meanwhile.
    }
  };
  visit(pid);
  return pids;
}

/** Read one /proc file of each process in the tree and add up what `pick` takes from it. */
function sumOverTree(pid, file, pick) {
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      total += pick(fs.readFileSync(`/proc/${p}/${file}`, "utf8"));
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

/** The resident memory of a process and its children, in MB. */
function treeRssMb(pid) {
  return Math.round(sumOverTree(pid, "status", (text) => Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0)) / 1024);
}

/** CPU seconds (user + system) a process and its children have used so far. */
function treeCpuSeconds(pid) {
  return (
    sumOverTree(pid, "stat", (text) => {
      const fields = text.split(") ")[1].split(" ");
      return Number(fields[11]) + Number(fields[12]);
    }) / 100
  );
}

function quantiles(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const q = (p) => (sorted.length ? Number(quantileSorted(sorted, p).toFixed(1)) : null);
  return { n: sorted.length, p50: q(0.5), p99: q(0.99), max: sorted.length ? Number(sorted.at(-1).toFixed(1)) : null };
}

/** The machine's CPU time so far, from /proc/stat: [user, nice, system, idle, iowait, irq, softirq, steal], in ticks. */
function machineCpuTicks() {
  return fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1, 9).map(Number);
}

/** Where the machine's time went between two machineCpuTicks(), in percent. Steal is time the hypervisor gave to other machines. */
function machineCpuShares(before, after) {
  const d = after.map((ticks, i) => ticks - before[i]);
  const total = d.reduce((sum, ticks) => sum + ticks, 0) || 1;
  const pct = (ticks) => Math.round((ticks / total) * 100);
  return { user: pct(d[0] + d[1]), system: pct(d[2] + d[5] + d[6]), idle: pct(d[3]), iowait: pct(d[4]), steal: pct(d[7]) };
}

/** Start a child process; `firstLine` is its first line of output, `lastLine` its last once it has ended (a JSON report). */
function startChild(args, options = {}) {
  const child = spawn(args[0], args.slice(1), { stdio: ["pipe", "pipe", "inherit"], ...options });
  let out = "";
  child.stdout.setEncoding("utf8");
  // "close", not "exit": the process may exit before its last output has been read.
  const firstLine = new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    child.once("close", (code) => reject(new Error(`${path.basename(args.at(-1))} exited (${code}) before it was ready`)));
  });
  // Only some callers wait for the first line; for the others, an early exit is not an unhandled rejection.
  firstLine.catch(() => {});
  const lastLine = new Promise((resolve) => child.once("close", () => resolve(out.trim().split("\n").at(-1))));
  return { child, firstLine, lastLine };
}

/** The routes an API client asks for, in turn (a dashboard's reads). */
const ROUTES = (recentId) => [
  () => "/api/status",
  () => "/api/requests?states=queued,processing",
  () => `/api/requests/${recentId()}`,
  () => "/api/requests?workspace=soak&sort=createdAt&order=desc",
  () => "/api/sessions",
  // A search as a person types one: a few words that match a handful of requests.
  () => `/api/requests?q=${encodeURIComponent(`soak request ${Math.floor(Math.random() * 1000)}`)}`,
];

/**
 * One API client: requests `routes` in turn, `thinkMs` apart on average, and calls `record` with
 * each answer's time. Start and pauses are jittered (0.5x to 1.5x): 50 clients started together
 * with a fixed pause would arrive as one wave of 50 every second, which no set of real browser
 * tabs does.
 */
async function poll({ url, routes, until, thinkMs, record, failures }) {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * thinkMs));
  for (let i = Math.floor(Math.random() * routes.length); Date.now() < until; i++) {
    const route = routes[i % routes.length]();
    const started = performance.now();
    try {
      const response = await fetch(url + route);
      await response.arrayBuffer();
      // A request not written yet (the id is a guess at a recent one) is a fair 404.
      if (!response.ok && !(response.status === 404 && route.startsWith("/api/requests/"))) failures.push(`${response.status} ${route}`);
    } catch (error) {
      failures.push(`${error.message} ${route}`);
    }
    record(route, started, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, thinkMs * (0.5 + Math.random())));
  }
}

export async function runSoak({
  seconds = 60,
  apiClients = 50,
  sseClients = 20,
  writers = 4,
  writesPerSecond = 500,
  thinkMs = 1000,
  writerNice = 0,
  floorClients = 5,
  log = console.log,
  nodeArgs = [],
} = {}) {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-soak-"));
  // reqwatch's own folder (the dashboard observes an empty folder it did not make).
  createRequire(import.meta.url)("../dist/internal.cjs").adoptStateDir(stateDir);
  const server = await startServer(ROOT, stateDir, {}, nodeArgs);
  const nullServer = startChild([process.execPath, path.join(ROOT, "scripts/soak/nullServer.cjs")]);
  const followers = startChild([process.execPath, path.join(ROOT, "scripts/soak/followers.mjs"), server.url, String(sseClients)]);
  try {
    const floorUrl = `http://127.0.0.1:${await nullServer.firstLine}`;
    // Warm up: each route's code is loaded on its first request (a one-off, not load).
    for (const route of ROUTES(() => "none")) await (await fetch(server.url + route())).arrayBuffer();
    // Every stream has its `ready` (its starting point in the feed) before the first write.
    await followers.firstLine;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rssStart = treeRssMb(server.child.pid);
    const cpuStart = treeCpuSeconds(server.child.pid);
    const machineStart = machineCpuTicks();

    // The clients' own event loop: if it lagged, the latencies below would include the lag.
    const clientLoop = monitorEventLoopDelay({ resolution: 10 });
    clientLoop.enable();
    const until = Date.now() + seconds * 1000;
    // `writerNice` > 0 runs the writers at a lower CPU priority: how much of the latency is the server's own, and how much waiting for a core.
    const writerReports = Array.from({ length: writers }, (_, w) =>
      startChild(
        [
          ...(writerNice > 0 ? ["nice", "-n", String(writerNice)] : []),
          process.execPath,
          path.join(ROOT, "scripts/soak/writer.cjs"),
          stateDir,
          String(writesPerSecond / writers),
          String(seconds),
          `w${w}`,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      ).lastLine.then((line) => JSON.parse(line || '{"writes":0,"errors":1,"firstErrors":["no report"]}')),
    );
    const latencies = [];
    const startedAt = [];
    const failures = [];
    const byRoute = {};
    const floorLatencies = [];
    const floorFailures = [];
    const started = Date.now();
    const recentId = () =>
      `w${Math.floor(Math.random() * writers)}-${Math.max(0, Math.floor(((Date.now() - started) / 1000) * (writesPerSecond / writers / 3)) - 5)}`;
    const recordApi = (route, at, ms) => {
      latencies.push(ms);
      startedAt.push(at);
      (byRoute[route.replace(/\/api\/requests\/[^?]+/, "/api/requests/<id>").replace(/q=.*/, "q=<words>")] ??= []).push(ms);
    };
    await Promise.all([
      ...Array.from({ length: apiClients }, () => poll({ url: server.url, routes: ROUTES(recentId), until, thinkMs, record: recordApi, failures })),
      ...Array.from({ length: floorClients }, () =>
        poll({ url: floorUrl, routes: [() => "/api/status"], until, thinkMs, record: (_, __, ms) => floorLatencies.push(ms), failures: floorFailures }),
      ),
    ]);
    const written = await Promise.all(writerReports);
    const machine = machineCpuShares(machineStart, machineCpuTicks());

    // Let the feed drain: wait until the feed's last change stops moving, then a second for the streams to catch up.
    const feedHead = async () => (await (await fetch(`${server.url}/api/health`)).json()).feed;
    let head = await feedHead();
    for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const now = await feedHead();
      if (now.lastSeq === head.lastSeq) break;
      head = now;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rssEnd = treeRssMb(server.child.pid);
    const cpuSeconds = treeCpuSeconds(server.child.pid) - cpuStart;
    const serverHealth = await (await fetch(`${server.url}/api/health`)).json();
    followers.child.stdin.end("stop\n");
    const clients = JSON.parse(await followers.lastLine);

    const writes = written.reduce((sum, r) => sum + r.writes, 0);
    const writeErrors = written.reduce((sum, r) => sum + r.errors, 0);
    const api = quantiles(latencies);
    // The first 10 s include the server's own warming (code compiled on first use, caches filling): reported apart.
    const loadStart = Math.min(...startedAt);
    const steady = quantiles(latencies.filter((_, i) => startedAt[i] - loadStart >= 10_000));
    const expected = (client) => head.lastSeq - client.startSeq;
    const report = {
      seconds,
      load: { apiClients, thinkMs, sseClients, writers, writesPerSecondAsked: writesPerSecond, writerNice },
      writes: { total: writes, perSecond: Math.round(writes / seconds), errors: writeErrors, firstErrors: written.flatMap((r) => r.firstErrors).slice(0, 5) },
      apiByRoute: Object.fromEntries(Object.entries(byRoute).map(([route, samples]) => [route, quantiles(samples)])),
      api: {
        requests: api.n,
        perSecond: Math.round(api.n / seconds),
        errors: failures.length,
        firstErrors: failures.slice(0, 5),
        p50Ms: api.p50,
        p99Ms: api.p99,
        maxMs: api.max,
        afterFirst10s: { p50Ms: steady.p50, p99Ms: steady.p99, maxMs: steady.max },
      },
      sse: {
        clients: clients.length,
        feedChanges: head.lastSeq - Math.min(...clients.map((c) => c.startSeq ?? 0)),
        everyChangeDelivered: clients.every((c) => c.received === expected(c) && c.lastSeq === head.lastSeq),
        gaps: clients.reduce((sum, c) => sum + c.gaps, 0),
        outOfOrder: clients.reduce((sum, c) => sum + c.outOfOrder, 0),
        resets: clients.reduce((sum, c) => sum + c.resets, 0),
        errors: clients.reduce((sum, c) => sum + c.errors, 0),
        shortest: Math.min(...clients.map((c) => c.received)),
      },
      // The same clients' latency from a server that does nothing (scripts/soak/nullServer.cjs): what the machine and the load cost any server.
      floor: { clients: floorClients, ...quantiles(floorLatencies), errors: floorFailures.length },
      serverRssMb: { start: rssStart, end: rssEnd },
      clientEventLoopDelayMs: { p99: Math.round(clientLoop.percentile(99) / 1e6), max: Math.round(clientLoop.max / 1e6) },
      server: {
        eventLoopDelayMs: serverHealth.eventLoopDelay,
        /** Share of one core the server used, from the first write to the end. */
        cpuShare: Number((cpuSeconds / (seconds + 2)).toFixed(2)),
        lastReconcileMs: serverHealth.ingest.lastReconcile?.durationMs ?? null,
        lastMonitorPassMs: serverHealth.monitor.durationMs,
      },
      // Where the machine's CPU time went during the load, in percent (steal: taken by the hypervisor for other machines).
      machine: { cpus: os.cpus().length, node: process.version, cpu: machine },
    };
    log(
      [
        `soak: ${seconds} s, ${apiClients} API clients (${thinkMs} ms think time), ${sseClients} SSE clients, ${writers} writer processes asked for ${writesPerSecond} writes/s`,
        `  writes     ${report.writes.total} (${report.writes.perSecond}/s), errors ${report.writes.errors}`,
        `  API        ${report.api.requests} requests (${report.api.perSecond}/s), errors ${report.api.errors}, p50 ${report.api.p50Ms} ms, p99 ${report.api.p99Ms} ms, max ${report.api.maxMs} ms${steady.n ? `; after the first 10 s: p50 ${steady.p50} ms, p99 ${steady.p99} ms, max ${steady.max} ms` : ""}`,
        `  SSE        ${report.sse.feedChanges} changes; every change to every client: ${report.sse.everyChangeDelivered}; gaps ${report.sse.gaps}, out of order ${report.sse.outOfOrder}, resets ${report.sse.resets}, errors ${report.sse.errors}`,
        `  floor      a server that does nothing, asked by ${floorClients} clients alongside: p50 ${report.floor.p50} ms, p99 ${report.floor.p99} ms, max ${report.floor.max} ms`,
        `  machine    CPU user ${machine.user}%, system ${machine.system}%, iowait ${machine.iowait}%, idle ${machine.idle}%, stolen by the hypervisor ${machine.steal}%`,
        `  clients' event loop delay p99 ${report.clientEventLoopDelayMs.p99} ms, max ${report.clientEventLoopDelayMs.max} ms`,
        `  server CPU ${Math.round(report.server.cpuShare * 100)}% of a core; RSS ${rssStart} MB at the start, ${rssEnd} MB at the end; event loop delay p50 ${report.server.eventLoopDelayMs.p50} ms, p99 ${report.server.eventLoopDelayMs.p99} ms, max ${report.server.eventLoopDelayMs.max} ms; last reconciliation ${report.server.lastReconcileMs} ms, monitor pass ${report.server.lastMonitorPassMs} ms`,
      ].join("\n"),
    );
    return report;
  } finally {
    nullServer.child.kill();
    followers.child.kill();
    await server.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Every figure can be changed from the environment; the short run in `npm test` uses a smaller load.
  const env = (name, fallback) => Number(process.env[`SOAK_${name}`] ?? fallback);
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-if-stale.mjs")], { stdio: "inherit" });
  const report = await runSoak({
    seconds: env("SECONDS", 60),
    apiClients: env("API_CLIENTS", 50),
    thinkMs: env("THINK_MS", 1000),
    sseClients: env("SSE_CLIENTS", 20),
    writers: env("WRITERS", 4),
    writesPerSecond: env("WRITES_PER_SECOND", 500),
    writerNice: env("WRITER_NICE", 0),
    floorClients: env("FLOOR_CLIENTS", 5),
  });
  const out = process.env.SOAK_REPORT ?? path.join(ROOT, "bench/soak-results.json");
  fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  const failed =
    report.writes.errors + report.api.errors + report.sse.gaps + report.sse.outOfOrder + report.sse.resets + report.sse.errors > 0 ||
    !report.sse.everyChangeDelivered;
  if (failed) console.error("soak: FAILED (errors, gaps, out-of-order or undelivered changes above)");
  process.exitCode = failed ? 1 : 0;
}
