// The live path measured against the dashboard server over a state directory of 100,000 requests:
// write-to-event latency, a 5,000-file burst, and the idle server's memory and CPU.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { readEvents } from "../scripts/lib/readEvents.mjs";
import { startServer } from "./server.mjs";

export async function measureLive({ ROOT, writeFiles, tempDir, openTracker, summarize, rows }) {
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-if-stale.mjs")], { stdio: "inherit" });
  const stateDir = tempDir("live");
  console.log("\nwriting 100,000 request files for the live server...");
  writeFiles(stateDir, 100_000);
  openTracker({ stateDir, recover: false }).close(); // build the index before the server starts

  // The files' finished requests span a week: with the retention on, the server would spend the
  // measurement archiving six days of them (the retention group measures that). Here: the live
  // pipeline, and the server at rest.
  const server = await startServer(ROOT, stateDir, { REQWATCH_RETENTION: "off" });
  const url = server.url;
  try {
    // One reader of the stream, as a browser would be.
    const seen = new Map();
    const abort = new AbortController();
    const response = await fetch(`${url}/api/events`, { signal: abort.signal });
    const reading = readEvents(response.body, (events) => {
      const at = performance.timeOrigin + performance.now();
      for (const event of events) {
        if (event.event !== "changes") continue;
        for (const change of event.data.changes) seen.set(change.requestId, (seen.get(change.requestId) ?? []).concat(at));
      }
    });
    // A stream that fails shows as undelivered events below; say why, and do not crash the bench.
    reading.catch((error) => console.error("bench: the event stream failed:", error));
    await new Promise((resolve) => setTimeout(resolve, 500));

    const dir = path.join(stateDir, "requests");
    const foreignWrite = (id) => {
      const temp = path.join(dir, `.${id}.tmp`);
      fs.writeFileSync(temp, JSON.stringify({ requestId: id, workspace: "live", state: "queued", createdAt: Date.now(), lastUpdatedAt: Date.now() }));
      fs.renameSync(temp, path.join(dir, `${id}.json`));
      return performance.timeOrigin + performance.now();
    };

    // Writes 300 ms apart: a pace the stream's coalescing (at most one batch per 250 ms) lets through
    // untouched, so this measures the pipeline. Faster streams are batched every 250 ms by design.
    const latencies = [];
    for (let i = 0; i < 200; i++) {
      const id = `lat${i}`;
      const wroteAt = foreignWrite(id);
      for (let wait = 0; !seen.has(id) && wait < 5000; wait += 2) await new Promise((resolve) => setTimeout(resolve, 2));
      if (seen.has(id)) latencies.push(seen.get(id)[0] - wroteAt);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, wroteAt + 300 - (performance.timeOrigin + performance.now()))));
    }
    summarize("foreign write (rename) -> SSE event at the client", latencies, { target: "p95 <= 100 ms" });

    const burstStart = performance.timeOrigin + performance.now();
    for (let i = 0; i < 5000; i++) foreignWrite(`burst${i}`);
    const written = performance.timeOrigin + performance.now();
    for (let wait = 0; wait < 30_000; wait += 20) {
      let all = true;
      for (let i = 0; i < 5000 && all; i += 1) all = seen.has(`burst${i}`);
      if (all) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    let delivered = 0;
    let doubles = 0;
    let lastAt = 0;
    for (let i = 0; i < 5000; i++) {
      const times = seen.get(`burst${i}`);
      if (!times) continue;
      delivered++;
      if (times.length > 1) doubles++;
      lastAt = Math.max(lastAt, times[0]);
    }
    const burst = {
      name: "burst of 5,000 new files into 100,000",
      n: 5000,
      delivered,
      doubleIngest: doubles,
      writeMs: Math.round(written - burstStart),
      lastEventAfterMs: Math.round(lastAt - burstStart),
      target: "100% within 10 s, zero double ingest",
    };
    rows.push(burst);
    console.log(
      `${burst.name.padEnd(56)} ${delivered}/5000 delivered, last ${burst.lastEventAfterMs} ms after the first write (writing took ${burst.writeMs} ms), ${doubles} double   target ${burst.target}`,
    );

    // Idle: no writes for two minutes; the stream stays open, the monitor and the watcher run.
    const cpuOf = () => {
      const fields = fs.readFileSync(`/proc/${server.child.pid}/stat`, "utf8").split(") ")[1].split(" ");
      return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, ticks of 10 ms
    };
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const reconciledBefore = (await (await fetch(`${url}/api/health`)).json()).ingest.lastReconcile?.at;
    const cpuBefore = cpuOf();
    const idleFrom = performance.now();
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.BENCH_IDLE_MS ?? 120_000)));
    const idleCpu = (100 * (cpuOf() - cpuBefore)) / (performance.now() - idleFrom);
    const rssMB = Math.round(Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${server.child.pid}/status`, "utf8"))[1]) / 1024);
    const health = await (await fetch(`${url}/api/health`)).json();
    const reconciledInWindow = health.ingest.lastReconcile?.at !== reconciledBefore;
    const idle = {
      name: "server watching 100,000 files, idle",
      rssMB,
      idleCpuPercent: Math.round(idleCpu * 100) / 100,
      reconciledInWindow,
      lastReconcileMs: health.ingest.lastReconcile?.durationMs,
      reconcileFixes: health.ingest.reconcileFixes,
      target: "RSS <= 300 MB, idle CPU <= 2% of a core",
    };
    rows.push(idle);
    console.log(
      `${idle.name.padEnd(56)} RSS ${rssMB} MB, CPU ${idle.idleCpuPercent}% of a core (${reconciledInWindow ? "a" : "no"} reconciliation of ${idle.lastReconcileMs} ms in the window), fixes ${idle.reconcileFixes}   target ${idle.target}`,
    );
    abort.abort();
  } finally {
    await server.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}
