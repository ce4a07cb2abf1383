// `BENCH_ONLY=retentionlive`: an open page's live updates while the dashboard's retention makes its
// first catch-up on a folder of a week of expired requests. A request file written by another
// program, to the event at a client of the server's stream (as bench/live.mjs measures it), with
// the retention off, then with it on from the server's start; the requests archived during the
// measurement say it ran meanwhile.
import fs from "node:fs";
import path from "node:path";
import { readEvents } from "../scripts/lib/readEvents.mjs";
import { startServer } from "./server.mjs";

const EXPIRED = Number(process.env.BENCH_RETENTION_FILES ?? 30_000);
const SAMPLES = 150;

/** Write-to-event latencies of `SAMPLES` foreign writes 300 ms apart, against the server at `url`. */
async function liveLatencies(url, dir, label) {
  const seen = new Map();
  const abort = new AbortController();
  const response = await fetch(`${url}/api/events`, { signal: abort.signal });
  const reading = readEvents(response.body, (events) => {
    const at = performance.timeOrigin + performance.now();
    for (const event of events) {
      if (event.event !== "changes") continue;
      for (const change of event.data.changes) if (!seen.has(change.requestId)) seen.set(change.requestId, at);
    }
  });
  reading.catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 300));
  const latencies = [];
  let lost = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const id = `${label}${i}`;
    const temp = path.join(dir, `.${id}.tmp`);
    fs.writeFileSync(temp, JSON.stringify({ requestId: id, workspace: "live", state: "queued", createdAt: Date.now(), lastUpdatedAt: Date.now() }));
    fs.renameSync(temp, path.join(dir, `${id}.json`));
    const wroteAt = performance.timeOrigin + performance.now();
    for (let wait = 0; !seen.has(id) && wait < 5000; wait += 2) await new Promise((resolve) => setTimeout(resolve, 2));
    if (seen.has(id)) latencies.push(seen.get(id) - wroteAt);
    else lost++;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wroteAt + 300 - (performance.timeOrigin + performance.now()))));
  }
  abort.abort();
  return { latencies, lost };
}

const requestFiles = (dir) => fs.readdirSync(dir).filter((name) => name.endsWith(".json")).length;

export async function measureRetentionLive({ ROOT, writeFiles, tempDir, openTracker, summarize, ratio }) {
  const stateDir = tempDir("retention-live");
  const dir = path.join(stateDir, "requests");
  console.log(`\nwriting ${EXPIRED.toLocaleString("en")} request files finished over the week before yesterday...`);
  writeFiles(stateDir, EXPIRED, Date.now() - 86_400_000, { states: ["completed", "failed", "timeout"] });
  openTracker({ stateDir, recover: false }).close();
  let baseline;
  try {
    const off = await startServer(ROOT, stateDir, { REQWATCH_RETENTION: "off" });
    try {
      const { latencies } = await liveLatencies(off.url, dir, "off");
      baseline = summarize("baseline: foreign write -> SSE event, no retention", latencies);
    } finally {
      await off.stop();
    }
    const load = fs.readFileSync("/proc/loadavg", "utf8").trim();
    const before = requestFiles(dir);
    const on = await startServer(ROOT, stateDir, {});
    try {
      const { latencies, lost } = await liveLatencies(on.url, dir, "on");
      const archived = before + SAMPLES - requestFiles(dir);
      const during = summarize(`foreign write -> SSE event, during the retention's first catch-up`, latencies, {
        target: "p95 <= 100 ms",
        archivedMeanwhile: archived,
        lost,
        load,
      });
      console.log(`  the retention archived ${archived} of ${before} requests meanwhile (${lost} events not seen in 5 s; load ${load})`);
      ratio("live updates' p95 during the catch-up / without", during.p95 / baseline.p95);
    } finally {
      await on.stop();
    }
  } finally {
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}
