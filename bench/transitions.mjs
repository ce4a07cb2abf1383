// BENCH_ONLY=transitions: what one write of a request costs the index's write-ahead log, by step
// of a worker's request (create, claim, heartbeat, complete) and by table or index written.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3");

/** Each step of the mix, as many times per round: small enough that no commit reaches the log's own checkpoint. */
const PER_ROUND = 100;
const ROUNDS = 5;

/**
 * The frames a log holds, and the page each frame writes (a 32-byte header, then per frame a
 * 24-byte header whose first 4 bytes are the page number, and the page).
 */
function walFrames(walFile, pageSize) {
  const wal = fs.readFileSync(walFile);
  const pages = [];
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) pages.push(wal.readUInt32BE(at));
  return { bytes: wal.length, pages };
}

/**
 * Method: the tracker's own connection writes as it always does; before each step a second
 * connection checkpoints the log and truncates it (TRUNCATE), then PER_ROUND writes of that step run
 * without giving the event loop a turn (so no timed checkpoint runs) and the log is read: its bytes
 * and frames are what those writes appended (a claim's include its reservation's commit). Each frame's page is named by SQLite's dbstat (the table or index it
 * belongs to), so the figures say where the pages go. A populated folder (5,000 requests in every
 * state) gives the b-trees a realistic depth.
 */
export async function measureTransitionWal({ tempDir, writeFiles, openTracker, rows }) {
  const stateDir = tempDir("transitions-wal");
  writeFiles(stateDir, 5000);
  const tracker = openTracker({ stateDir, recover: false });
  const indexFile = path.join(stateDir, "index.db");
  const side = new Database(indexFile);
  const pageSize = side.pragma("page_size", { simple: true });
  const prompt = `${"Summarise the failing tests in the repository and propose a fix. ".repeat(3)}Ticket T42.`;
  const totals = {};
  const byTable = {};
  let next = 0;
  /** The round's claims, given heartbeats and completed by the steps after the claims. */
  let claims = [];
  const steps = {
    create: () =>
      tracker.create({ requestId: `m${next++}`, workspace: `ws${next % 20}`, sessionId: `s${next % 500}`, state: "queued", prompt, model: "sonnet" }),
    claim: () => {
      const claim = tracker.claimNext();
      if (claim) claims.push(claim);
    },
    heartbeat: () => {
      for (const claim of claims) tracker.heartbeat(claim.request.requestId, claim.token);
    },
    complete: () => {
      for (const claim of claims.splice(0))
        tracker.complete(claim.request.requestId, claim.token, { output: "All 112 tests pass after the fix.", tokens: 812 });
    },
  };
  const names = () =>
    new Map(
      side
        .prepare("SELECT pageno, name FROM dbstat")
        .all()
        .map((row) => [row.pageno, row.name]),
    );
  for (let round = 0; round < ROUNDS; round++) {
    for (const step of ["create", "claim", "heartbeat", "complete"]) {
      side.pragma("wal_checkpoint(TRUNCATE)");
      // Heartbeat and complete act on every claim of the round at once: one call each, PER_ROUND writes.
      const calls = step === "heartbeat" || step === "complete" ? 1 : PER_ROUND;
      for (let i = 0; i < calls; i++) steps[step]();
      const { bytes, pages } = walFrames(`${indexFile}-wal`, pageSize);
      const owner = names();
      const total = (totals[step] ??= { bytes: 0, frames: 0, writes: 0 });
      total.bytes += bytes;
      total.frames += pages.length;
      total.writes += PER_ROUND;
      const tables = (byTable[step] ??= {});
      for (const page of pages) {
        const name = owner.get(page) ?? "(free or new page)";
        tables[name] = (tables[name] ?? 0) + 1;
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  side.close();
  tracker.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
  console.log(`index write-ahead log per write (page size ${pageSize}; ${ROUNDS} rounds of ${PER_ROUND} of each step, 5,000 requests indexed):`);
  for (const [step, { bytes, frames, writes }] of Object.entries(totals)) {
    const perWrite = Object.fromEntries(
      Object.entries(byTable[step])
        .sort((a, b) => b[1] - a[1])
        .map(([name, n]) => [name, Number((n / writes).toFixed(2))]),
    );
    const row = {
      name: `index log per ${step} (WAL)`,
      n: writes,
      walKB: Number((bytes / writes / 1024).toFixed(1)),
      pages: Number((frames / writes).toFixed(1)),
      byTable: perWrite,
    };
    rows.push(row);
    console.log(`${row.name.padEnd(56)} ${String(row.walKB).padStart(6)} KB  ${String(row.pages).padStart(5)} pages`);
    console.log(
      `  ${Object.entries(perWrite)
        .map(([name, n]) => `${name} ${n}`)
        .join(", ")}`,
    );
  }
}
