// `npm run bench`: measures the tracker on this machine, prints a table, writes bench/results.json.
// Timings are per operation; we report medians and tails (p95, p99) over many operations.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { quantileSorted } from "simple-statistics";
import { measureLive } from "./live.mjs";
import { measureDashboard, measureFirstOpen, measureSourceDashboard } from "./dashboard.mjs";
import { measureMcp } from "./mcp.mjs";
import { measurePackage } from "./package.mjs";
import { measureOtel } from "./otel.mjs";
import { measureTelemetry } from "./telemetry.mjs";
import { measureClaudeMemQueue } from "./claudeMemQueue.mjs";
import { postgresThroughput, startPostgres } from "./postgres.mjs";
import { writeFiles } from "./requestFiles.mjs";
import { measureBigFolder } from "./bigFolder.mjs";
import { measureBigExport, measureMcpFlood } from "./floods.mjs";
import { measureAgentFiles } from "./agentFiles.mjs";
import { measureCharts } from "./charts.mjs";
import { measureRetentionLive } from "./retentionLive.mjs";
import { measureTransitionWal } from "./transitions.mjs";

const require = createRequire(import.meta.url);
// The library's tracker, and the roles reqwatch's programs hold: the benches time the reader's and the operator's calls too.
const { openTracker, openRoles, adoptStateDir, redactSecrets, STATES, ACTIVITY_RANGES } = require("../dist/internal.cjs");
const Database = require("better-sqlite3");
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const rows = [];

function summarize(name, samplesMs, extra = {}) {
  // `target` is the figure the project aims for; rows without one are context.
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const q = (p) => Number(quantileSorted(sorted, p).toFixed(3));
  const row = { name, n: sorted.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: Number(sorted.at(-1).toFixed(3)), ...extra };
  rows.push(row);
  console.log(
    `${name.padEnd(56)} n=${String(row.n).padStart(6)}  p50 ${fmt(row.p50)}  p95 ${fmt(row.p95)}  p99 ${fmt(row.p99)}${extra.target ? `   target ${extra.target}` : ""}`,
  );
  return row;
}

const median = (samples) =>
  quantileSorted(
    [...samples].sort((a, b) => a - b),
    0.5,
  );

/** A figure over its baseline measured in the same run (medians over medians). */
function ratio(name, value, extra = {}, digits = 2) {
  const row = { name: `${name} (ratio)`, ratio: Number(value.toFixed(digits)), ...extra };
  rows.push(row);
  console.log(`${row.name.padEnd(56)} x${row.ratio}${extra.target ? `   target ${extra.target}` : ""}`);
}

function fmt(ms) {
  return ms < 1 ? `${(ms * 1000).toFixed(0).padStart(5)} us` : `${ms.toFixed(2).padStart(6)} ms`;
}

function time(fn) {
  const start = process.hrtime.bigint();
  const result = fn();
  return [Number(process.hrtime.bigint() - start) / 1e6, result];
}

/** A state directory reqwatch manages (files written into it directly stand for a tracker's own). */
function tempDir(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `reqwatch-bench-${label}-`));
  adoptStateDir(dir);
  return dir;
}

/** The disk's own cost for one durable replace, outside reqwatch: the floor under every write below. */
function bareDurableWrites(count = 2000, { newNames = false } = {}) {
  const dir = tempDir("bare");
  const body = "x".repeat(900);
  const samples = [];
  for (let i = 0; i < count; i++) {
    samples.push(
      time(() => {
        const temp = path.join(dir, `t${i}`);
        const fd = fs.openSync(temp, "wx");
        fs.writeSync(fd, body);
        fs.fsyncSync(fd);
        fs.closeSync(fd);
        // `newNames`: each under a name of its own, as a create is (the folder grows by one entry each time).
        fs.renameSync(temp, path.join(dir, newNames ? `n${i}.json` : "target.json"));
        const dirFd = fs.openSync(dir, "r");
        fs.fsyncSync(dirFd);
        fs.closeSync(dirFd);
      })[0],
    );
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return samples;
}

function measureBareDurableWrite() {
  summarize("baseline: bare temp+fsync+rename+fsync-dir", bareDurableWrites());
}

/**
 * Creates and transitions as an application makes them: the event loop gets a turn between two
 * writes (where the index's checkpoints run, lib/db/checkpoints.ts). Three rounds, each beside the
 * bare durable write in the same round; the ratios are of the medians of the rounds' p99s.
 */
async function measureWrites() {
  const N = 2000;
  const p99 = (samples) =>
    quantileSorted(
      [...samples].sort((a, b) => a - b),
      0.99,
    );
  const rounds = { bare: [], bareNew: [], create: [], transition: [] };
  const all = { bare: [], bareNew: [], create: [], transition: [] };
  for (let round = 0; round < 3; round++) {
    const bare = bareDurableWrites(N);
    const bareNew = bareDurableWrites(N, { newNames: true });
    const stateDir = tempDir("writes");
    const tracker = openTracker({ stateDir });
    const create = [];
    const transition = [];
    for (let i = 0; i < N; i++) {
      create.push(time(() => tracker.create({ requestId: `w${i}`, workspace: "bench", state: "queued", prompt: "hello" }))[0]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const [to, fields] of [["processing"], ["completed", { output: "done", tokens: 10 }]]) {
      for (let i = 0; i < N; i++) {
        transition.push(time(() => tracker.transition(`w${i}`, to, fields && { fields }))[0]);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    tracker.close();
    fs.rmSync(stateDir, { recursive: true, force: true });
    for (const [name, samples] of Object.entries({ bare, bareNew, create, transition })) {
      rounds[name].push(p99(samples));
      all[name].push(...samples);
    }
  }
  summarize("baseline: bare temp+fsync+rename+fsync-dir", all.bare);
  summarize("baseline: the same, each to a new name (a growing folder)", all.bareNew);
  summarize("create (durable)", all.create, { target: "p99 <= 2x the bare write to a new name's" });
  summarize("transition (durable)", all.transition, { target: "p99 <= 2x the bare write's" });
  // A create writes a new file into a growing folder: the bare write to a new name is its floor,
  // and the one its target is measured against; a rewrite of one name (a transition's) is cheaper.
  ratio("create p99 / bare write to a new name p99", median(rounds.create) / median(rounds.bareNew), { target: "<= 2" });
  ratio("create p99 / bare write p99 (one name rewritten)", median(rounds.create) / median(rounds.bare));
  ratio("transition p99 / bare write p99", median(rounds.transition) / median(rounds.bare), { target: "<= 2" });
}

function measureAt100k() {
  const stateDir = tempDir("100k");
  console.log("\nwriting 100,000 request files...");
  writeFiles(stateDir, 100_000);

  // The limit beside it: one thread reading and parsing every file, nothing else (no validation, no index).
  const requestsDir = path.join(stateDir, "requests");
  const bare = [];
  const rebuilds = [];
  let folder;
  for (let round = 0; round < 3; round++) {
    bare.push(
      time(() => {
        for (const name of fs.readdirSync(requestsDir)) JSON.parse(fs.readFileSync(path.join(requestsDir, name), "utf8"));
      })[0],
    );
    folder?.close();
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });
    const [ms, opened] = time(() => openRoles({ stateDir, recover: false }));
    rebuilds.push(ms);
    folder = opened;
  }
  const { tracker, reader, operator, upkeep } = folder;
  summarize("baseline: read + JSON.parse of the 100k files, one thread", bare);
  const rebuild = summarize("rebuild of 100k from files (missing index)", rebuilds, {
    target: "<= 5 s",
    readerThreads: tracker.openReport.readerThreads,
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
  });
  ratio("rebuild of 100k / bare read + parse", rebuild.p50 / median(bare));
  indexSize(stateDir);

  const ids = Array.from({ length: 10_000 }, (_, i) => `r${String((i * 7919) % 100_000).padStart(7, "0")}`);
  summarize(
    "get by id (100k)",
    ids.map((id) => time(() => tracker.get(id))[0]),
    { target: "p99 <= 0.5 ms" },
  );

  const pages = (name, filtersFor, target = "p99 <= 5 ms") => {
    const samples = [];
    for (let i = 0; i < 1000; i++) {
      const filters = filtersFor(i);
      const [ms, page] = time(() => tracker.list(filters));
      // Walk a few pages deep with the cursor too: keyset paging costs the same at any depth.
      if (i % 10 === 0 && page.nextCursor) samples.push(time(() => tracker.list({ ...filters, cursor: page.nextCursor }))[0]);
      samples.push(ms);
    }
    summarize(name, samples, target ? { target } : {});
  };
  pages("page of 50 by state (100k)", (i) => ({ states: [STATES[i % STATES.length]], limit: 50 }));
  pages("page of 50 by two states (100k)", (i) => ({ states: [STATES[i % STATES.length], STATES[(i + 1) % STATES.length]], limit: 50 }));
  pages("page of 50 by workspace (100k)", (i) => ({ workspace: `ws${i % 20}`, limit: 50 }));
  {
    // A rebuilt index fills its text index afterwards; the server does it in steps, a search does it at once.
    const [ms] = time(() => upkeep.backfillTextIndex(1_000_000));
    summarize("text index fill after a rebuild (100k)", [ms]);
  }
  pages("page of 50 by text search, a word in 100 requests (100k)", (i) => ({ text: `T${i % 1000}`, limit: 50 }));
  // Every row matches: SQLite collects all 100k matches before it sorts by update time. Slow, shown.
  pages(
    "page of 50 by text search, a word in every request (100k)",
    (i) => ({ text: i % 2 ? "failing" : "summarise tests", limit: 50 }),
    "p99 <= 300 ms (the dashboard's filter target)",
  );
  const now = Date.now();
  const day = (i) => ({ from: now - ((i % 7) + 1) * 86_400_000, to: now - (i % 7) * 86_400_000 });
  pages("page of 50 by created range, sorted by created (100k)", (i) => ({ createdFrom: day(i).from, createdTo: day(i).to, sort: "createdAt", limit: 50 }));
  pages("page of 50 by updated range, sorted by updated (100k)", (i) => ({ updatedFrom: day(i).from, updatedTo: day(i).to, limit: 50 }));
  // A range on one column sorted by the other sorts every matching row (~14k here): shown, not hidden.
  pages("page of 50 by created range, sorted by updated (100k)", (i) => ({ createdFrom: day(i).from, createdTo: day(i).to, limit: 50 }), null);
  summarize(
    "counts by state (100k)",
    Array.from({ length: 200 }, () => time(() => reader.countsByState())[0]),
  );

  summarize(
    "monitor pass (100k)",
    Array.from({ length: 50 }, () => time(() => operator.monitorPass())[0]),
    { target: "<= 50 ms" },
  );
  summarize(
    "workers seen, grouped from the claims (100k)",
    Array.from({ length: 50 }, () => time(() => reader.workers())[0]),
  );
  {
    // The charts' query over the rollups (lib/db/queries/activity.ts), every range, all workspaces and one.
    const index = new Database(path.join(stateDir, "index.db"), { readonly: true });
    const steps = index.prepare("SELECT count(*) FROM transitions").pluck().get();
    index.close();
    for (const [range, { rangeMs, pointMs, spanMs }] of Object.entries(ACTIVITY_RANGES)) {
      const at = Date.now();
      summarize(
        `chart query, last ${range} (100k requests, ${steps} steps)`,
        Array.from(
          { length: 200 },
          (_, i) => time(() => reader.activity({ spanMs, pointMs, from: at - rangeMs, to: at, match: i % 2 ? { workspace: `ws${i % 20}` } : null }))[0],
        ),
        { target: "p95 <= 50 ms" },
      );
    }
  }
  summarize(
    "known workspaces starting with a prefix (100k)",
    Array.from({ length: 200 }, (_, i) => time(() => reader.knownValues("workspace", `ws${i % 10}`))[0]),
  );

  const warm = [];
  for (let i = 0; i < 5; i++) warm.push(time(() => operator.recover({ processingStuckAfterMs: 365 * 86_400_000 }))[0]);
  summarize("recovery of 100k, warm index", warm);
  tracker.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
}

/** The index's bytes on disk beside the files it is derived from, and the tables and indexes they go to (SQLite's dbstat). */
function indexSize(stateDir) {
  const requestsDir = path.join(stateDir, "requests");
  let filesBytes = 0;
  for (const name of fs.readdirSync(requestsDir)) filesBytes += fs.statSync(path.join(requestsDir, name)).size;
  const indexBytes = ["", "-wal"].reduce(
    (sum, suffix) => sum + (fs.statSync(path.join(stateDir, `index.db${suffix}`), { throwIfNoEntry: false })?.size ?? 0),
    0,
  );
  const index = new Database(path.join(stateDir, "index.db"), { readonly: true });
  const parts = index.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 8").all();
  index.close();
  const mb = (bytes) => Number((bytes / 1e6).toFixed(1));
  ratio("index on disk (with its log) / request files (100k)", indexBytes / filesBytes, {
    indexMB: mb(indexBytes),
    filesMB: mb(filesBytes),
    largest: Object.fromEntries(parts.map((part) => [part.name, mb(part.bytes)])),
  });
  console.log(`  index ${mb(indexBytes)} MB, files ${mb(filesBytes)} MB; largest: ${parts.map((part) => `${part.name} ${mb(part.bytes)} MB`).join(", ")}`);
}

function measureRecovery1k() {
  const stateDir = tempDir("1k");
  writeFiles(stateDir, 1000);
  const cold = [];
  for (let i = 0; i < 5; i++) {
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });
    const [ms, tracker] = time(() => openTracker({ stateDir, processingStuckAfterMs: 365 * 86_400_000 }));
    cold.push(ms);
    tracker.close();
  }
  summarize("recovery of 1,000, missing index (open)", cold, { target: "< 1 s" });
  const warm = [];
  for (let i = 0; i < 20; i++) {
    const [ms, tracker] = time(() => openTracker({ stateDir, processingStuckAfterMs: 365 * 86_400_000 }));
    warm.push(ms);
    tracker.close();
  }
  summarize("recovery of 1,000, warm index (open)", warm, { target: "<= 100 ms" });
  fs.rmSync(stateDir, { recursive: true, force: true });
}

function measureCleanup() {
  const samples = [];
  for (let run = 0; run < 3; run++) {
    const stateDir = tempDir("cleanup");
    writeFiles(stateDir, 12_000, Date.now() - 30 * 86_400_000);
    const { operator, close } = openRoles({ stateDir, recover: false });
    const [ms, report] = time(() => operator.cleanup({ olderThanMs: 86_400_000, states: STATES }));
    if (report.archived !== 12_000) throw new Error(`cleanup archived ${report.archived}`);
    samples.push((ms * 10_000) / 12_000);
    close();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
  summarize("cleanup of 10,000 (archive + delete), per run", samples);
}

function measureCli() {
  const stateDir = tempDir("cli");
  const tracker = openTracker({ stateDir });
  tracker.create({ requestId: "hook", workspace: "bench", state: "processing" });
  tracker.close();
  const run = (env) => {
    const samples = [];
    for (let i = 0; i < 20; i++) {
      const start = process.hrtime.bigint();
      const result = spawnSync(
        process.execPath,
        [path.join(ROOT, "bin/reqwatch.js"), "update", "hook", "--callback-success", "true", "--callback-attempts", String(i)],
        { env: { ...env, REQWATCH_STATE_DIR: stateDir } },
      );
      if (result.status !== 0) throw new Error(String(result.stderr));
      samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    return samples;
  };
  const bare = { ...process.env };
  delete bare.NODE_EXTRA_CA_CERTS;
  summarize("CLI `reqwatch update` wall time", run(bare), { target: "well under 200 ms" });
  if (process.env.NODE_EXTRA_CA_CERTS) {
    summarize("CLI `reqwatch update`, with NODE_EXTRA_CA_CERTS set", run(process.env));
  }
  fs.rmSync(stateDir, { recursive: true, force: true });
  measureCliReads(bare);
}

/**
 * The reading commands check the folder's files against the index first (`tracker.refresh`): `get`
 * its one file, `list` every file. On 10,000 requests, beside the CLI's bare start in the same run.
 */
function measureCliReads(env) {
  const N = 10_000;
  const stateDir = tempDir("cli-reads");
  const tracker = openTracker({ stateDir });
  for (let i = 0; i < N; i++) tracker.create({ requestId: `r${i}`, workspace: "bench", state: "queued" });
  tracker.close();
  const run = (args) =>
    Array.from({ length: 10 }, () => {
      const start = process.hrtime.bigint();
      const result = spawnSync(process.execPath, [path.join(ROOT, "bin/reqwatch.js"), ...args], {
        // No follower: each command checks the files itself, as the rows say (a follower would also outlive the folder's removal below).
        env: { ...env, REQWATCH_STATE_DIR: stateDir, REQWATCH_FOLLOW: "0" },
        maxBuffer: 64 * 1024 * 1024,
      });
      if (result.status !== 0) throw new Error(String(result.stderr));
      return Number(process.hrtime.bigint() - start) / 1e6;
    });
  const bare = summarize("baseline: CLI start (`reqwatch --version`)", run(["--version"]));
  const get = summarize(`CLI \`reqwatch get\` on ${N.toLocaleString("en")} requests (its file checked first)`, run(["get", "r5000"]));
  const list = summarize(`CLI \`reqwatch list\` on ${N.toLocaleString("en")} requests (every file checked first)`, run(["list"]));
  ratio("`get` p50 / bare start p50", get.p50 / bare.p50);
  ratio("`list` p50 / bare start p50", list.p50 / bare.p50);
  fs.rmSync(stateDir, { recursive: true, force: true });
}

/** A claude-mem database of `n` messages, as its v12.4.5 creates the table (WAL), most of them failed or processed. */
function claudeMemDb(file, n) {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec(`CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT UNIQUE NOT NULL, memory_session_id TEXT, project TEXT NOT NULL, platform_source TEXT, user_prompt TEXT, started_at_epoch INTEGER NOT NULL, completed_at_epoch INTEGER, status TEXT NOT NULL DEFAULT 'active');
    CREATE TABLE pending_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_db_id INTEGER NOT NULL REFERENCES sdk_sessions(id), content_session_id TEXT NOT NULL, tool_use_id TEXT, message_type TEXT NOT NULL, tool_name TEXT, tool_input TEXT, tool_response TEXT, cwd TEXT, last_user_message TEXT, last_assistant_message TEXT, prompt_number INTEGER, status TEXT NOT NULL DEFAULT 'pending', retry_count INTEGER NOT NULL DEFAULT 0, created_at_epoch INTEGER NOT NULL, started_processing_at_epoch INTEGER, completed_at_epoch INTEGER, failed_at_epoch INTEGER, agent_type TEXT, agent_id TEXT, worker_pid INTEGER);`);
  const now = Date.now();
  const statuses = ["failed", "failed", "processed", "pending", "processing"];
  db.transaction(() => {
    for (let s = 0; s < 300; s++)
      db.prepare("INSERT INTO sdk_sessions (content_session_id, project, started_at_epoch) VALUES (?, ?, ?)").run(
        `session-${s}`,
        `project-${s % 12}`,
        now - 30 * 86_400_000,
      );
    const insert =
      db.prepare(`INSERT INTO pending_messages (session_db_id, content_session_id, message_type, tool_name, tool_input, tool_response, status, retry_count, created_at_epoch, started_processing_at_epoch, completed_at_epoch, failed_at_epoch)
      VALUES (?, ?, 'observation', 'Bash', ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (let i = 0; i < n; i++) {
      const status = statuses[i % statuses.length];
      const at = now - (n - i) * 40_000;
      insert.run(
        (i % 300) + 1,
        `session-${i % 300}`,
        JSON.stringify({ command: `npm test -- --shard ${i % 40}` }),
        status === "processed" ? "ok ".repeat(50) : null,
        status,
        status === "failed" ? 3 : 0,
        at,
        status === "pending" ? null : at + 1000,
        status === "processed" ? at + 5000 : null,
        status === "failed" ? at + 5000 : null,
      );
    }
  })();
  return db;
}

/**
 * A claude-mem database of 60,000 messages: `reqwatch source` beside the CLI's own start
 * (`--version`) in the same run, then the dashboard reading it as a source (bench/dashboard.mjs).
 */
async function measureSource() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-bench-claude-mem-"));
  const file = path.join(dir, "claude-mem.db");
  const db = claudeMemDb(file, 60_000);
  const run = (args) =>
    Array.from({ length: 10 }, () => {
      const start = process.hrtime.bigint();
      const result = spawnSync(process.execPath, [path.join(ROOT, "bin/reqwatch.js"), ...args], { maxBuffer: 64 * 1024 * 1024 });
      if (result.status !== 0) throw new Error(String(result.stderr));
      return Number(process.hrtime.bigint() - start) / 1e6;
    });
  summarize("baseline: CLI start (`reqwatch --version`)", run(["--version"]));
  summarize("CLI `reqwatch source` on claude-mem, 60,000 messages", run(["source", `claude-mem:${file}`]));
  // The owner keeps its connection open (and so its WAL) while the dashboard reads.
  await measureSourceDashboard({ ROOT, file, owner: db, tempDir, summarize });
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Completed requests per second through runWorker with `workers` processes: claim, heartbeat, result marker, complete (durable). */
async function throughputRun(REQUESTS, workers, claims) {
  const stateDir = tempDir(`throughput${workers}`);
  const tracker = openTracker({ stateDir });
  for (let i = 0; i < REQUESTS; i++) tracker.create({ requestId: `q${i}`, workspace: "bench", state: "queued" });
  const children = Array.from({ length: workers }, () =>
    spawn(process.execPath, [path.join(ROOT, "bench/workers/throughput.cjs"), stateDir, claims], { stdio: ["ignore", "pipe", "inherit"] }),
  );
  const results = await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve, reject) => {
          let out = "";
          child.stdout.on("data", (chunk) => (out += chunk));
          child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`worker exited ${code}`))));
        }),
    ),
  );
  const completed = results.reduce((sum, r) => sum + r.completed, 0);
  const seconds = (Math.max(...results.map((r) => r.last)) - Math.min(...results.map((r) => r.first).filter(Boolean))) / 1000;
  let doubleClaims = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const claimed = tracker.get(`q${i}`).transitions.filter((t) => t.from === "queued" && t.to === "processing").length;
    if (claimed !== 1) doubleClaims++;
  }
  if (completed !== REQUESTS || doubleClaims) throw new Error(`completed ${completed}, double claims ${doubleClaims}`);
  tracker.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
  return { completed, perSecond: Math.round(completed / seconds), doubleClaims };
}

function throughputRow(name, { completed, perSecond, doubleClaims }, target) {
  rows.push({ name, n: completed, perSecond, doubleClaims, ...(target && { target }) });
  console.log(
    `${name.padEnd(56)} ${String(perSecond).padStart(6)} completed/s  (${completed} requests, ${doubleClaims} double claims)${target ? `   target ${target}` : ""}`,
  );
}

async function measureThroughput() {
  // The limit beside it: a completion is two durable writes (its claim and its result), so one
  // process doing nothing but bare durable writes would complete at most half its write rate.
  const bare = summarize("baseline: bare temp+fsync+rename+fsync-dir (throughput group)", bareDurableWrites());
  const bareCompletions = 1000 / bare.p50 / 2;
  console.log(`baseline: bare durable writes allow ${Math.round(bareCompletions)} completions/s in one process`);
  const runs = [...[1, 2, 4].map((workers) => ({ workers, claims: "full" })), { workers: 2, claims: "atomic" }];
  for (const { workers, claims } of runs) {
    const run = await throughputRun(3000, workers, claims);
    throughputRow(`throughput, ${workers} worker process(es), ${claims} claims`, run, workers === 2 ? ">= 500/s" : undefined);
    if (workers === 2 && claims === "full") ratio("2 worker processes' completions/s / one process's bare-write limit", run.perSecond / bareCompletions);
  }
}

/**
 * docs/PERFORMANCE.md's prototype: the same queue steps on PostgreSQL 15 (claims by FOR UPDATE SKIP
 * LOCKED, a transitions table, NOTIFY per change) against the present store, 2 worker processes
 * each, in the same run, twice each, alternating.
 */
async function measureScaling() {
  const server = await startPostgres();
  try {
    for (let round = 0; round < 2; round++) {
      throughputRow("scaling: present store, 2 worker processes", await throughputRun(3000, 2, "full"));
      const pg = await postgresThroughput(ROOT, server, 3000, 2);
      throughputRow("scaling: PostgreSQL prototype, 2 worker processes", { completed: 3000, ...pg });
    }
    const pg4 = await postgresThroughput(ROOT, server, 3000, 4);
    throughputRow("scaling: PostgreSQL prototype, 4 worker processes", { completed: 3000, ...pg4 });
  } finally {
    server.stop();
  }
}

/**
 * Pausing a workspace while a worker process polls it: how long pause() takes (a durable write
 * under the writers' lock), and whether the worker claimed anything from the workspace after a
 * pause returned. Beside it, the bare durable write. Also what a claim pays for reading paused/.
 */
async function measurePause() {
  measureBareDurableWrite();
  const stateDir = tempDir("pause");
  const { tracker, operator } = openRoles({ stateDir });
  for (let i = 0; i < 4000; i++) tracker.create({ requestId: `p${i}`, workspace: i % 2 ? "batch" : "chat", state: "queued" });
  // A worker in another process, polling every 50 ms when idle, as runWorker does.
  const worker = spawn(
    process.execPath,
    [
      "-e",
      `const { runWorker } = require(${JSON.stringify(path.join(ROOT, "dist/index.cjs"))}); const w = runWorker({ stateDir: process.argv[1], pollIntervalMs: 50, handler: () => ({ output: "ok" }) }); process.on("SIGTERM", () => w.stop().then(() => process.exit(0)));`,
      stateDir,
    ],
    { stdio: "ignore" },
  );
  const samples = [];
  let claimedAfterPause = 0;
  for (let round = 0; round < 40; round++) {
    const [ms, outcome] = time(() => operator.pause("batch", { by: "bench" }));
    samples.push(ms);
    const pausedAt = outcome.pause.pausedAt;
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Anything of batch's claimed after the pause returned would be a violation.
    // (one claimed before it and finished after is work already claimed, which finishes).
    for (const row of tracker.list({ workspace: "batch", states: ["processing", "completed"], limit: 1000 }).items) {
      if (row.stateSince <= pausedAt) continue;
      const claims = tracker.get(row.requestId).transitions.filter((step) => step.to === "processing");
      if (claims.some((step) => step.at > pausedAt)) claimedAfterPause++;
    }
    operator.resume("batch", { by: "bench" });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  worker.kill("SIGTERM");
  await new Promise((resolve) => worker.once("exit", resolve));
  summarize("pause a workspace (durable, under the writers' lock)", samples, { target: "nothing claimed after it: within 1 s", claimedAfterPause });
  console.log(`  requests of the paused workspace claimed after a pause returned: ${claimedAfterPause} (of 40 pauses)`);
  tracker.close();
  fs.rmSync(stateDir, { recursive: true, force: true });

  // A claim with half the workspaces paused must not scan their backlog: beside the same claims with none paused.
  const big = tempDir("pause-100k");
  writeFiles(big, 100_000);
  const queue = openRoles({ stateDir: big, recover: false });
  const claims = (n) => Array.from({ length: n }, () => time(() => queue.tracker.claimNext())[0]);
  summarize("claim, nothing paused (100k, 17k queued)", claims(300));
  for (let w = 0; w < 10; w++) queue.operator.pause(`ws${w}`, { by: "bench" });
  summarize("claim, half the workspaces paused (100k)", claims(300), { target: "no slower than with none paused" });
  queue.close();
  fs.rmSync(big, { recursive: true, force: true });
}

/**
 * The monitor's retention on 100,000 finished requests past it, in its paced steps, while a
 * gateway in another process writes: the writer's p99 beside the same writer with no retention
 * running, in the same round (3 rounds; the ratio is of the medians of the rounds' p99s).
 */
async function measureRetention() {
  const stateDir = tempDir("retention");
  console.log("\nwriting 100,000 finished request files...");
  // Finished over the week before: all past the default 24 h but the newest seventh.
  writeFiles(stateDir, 117_000, Date.now() - 86_400_000, { states: ["completed", "failed", "timeout"] });
  openTracker({ stateDir }).close();
  const writer = async (label) => {
    const child = spawn(process.execPath, [path.join(ROOT, "bench/workers/writer.cjs"), stateDir, "5000", label], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    await new Promise((resolve) => child.once("exit", resolve));
    return JSON.parse(out);
  };
  const p99 = (samples) =>
    quantileSorted(
      [...samples].sort((a, b) => a - b),
      0.99,
    );
  const rounds = { alone: [], during: [] };
  const all = { alone: [], during: [] };
  for (let round = 0; round < 3; round++) {
    const alone = await writer(`alone${round}`);
    const { operator, close } = openRoles({ stateDir, recover: false });
    const running = operator.runRetention();
    const during = await writer(`during${round}`);
    const entry = operator.actions.list(1)[0];
    console.log(`  round ${round + 1}: retention removed ${entry?.changed ?? 0} meanwhile`);
    close();
    await running;
    rounds.alone.push(p99(alone));
    rounds.during.push(p99(during));
    all.alone.push(...alone);
    all.during.push(...during);
  }
  summarize("baseline: a gateway's writes, no retention running", all.alone);
  summarize("the same writes while the retention runs (100k past it)", all.during, { target: "p99 <= 2x the baseline's" });
  ratio("writes' p99 during retention / without", median(rounds.during) / median(rounds.alone), { target: "<= 2" });
  fs.rmSync(stateDir, { recursive: true, force: true });
}

/** A 4 KB prompt as an agent sends one: prose, a command, code, and two secrets (an OpenAI key and a database password in a URL). */
function promptWithSecrets() {
  // Real-shaped: 74 characters on each side of the marker, as secretlint's OpenAI rule expects.
  const key = `sk-proj-${"Ab3_".repeat(18)}xy-T3BlbkFJ${"Qz7-".repeat(18)}k2`.replace("-T3", "T3");
  const paragraph =
    "The deploy failed after the migration step; the worker logged a timeout while it waited for the queue. " +
    "Check `npm run build && npm test`, then look at src/queue/worker.ts:142 where the retry count is read. " +
    "const backoff = Math.min(cap, base * 2 ** attempt); // commit e3b231f0c8a9d4b5e6f7a8b9c0d1e2f3a4b5c6d7\n";
  const secrets = `\nexport OPENAI_API_KEY=${key}\npsql postgres://app_user:Xk93mQ7zTq@db.internal:5432/app -c 'select 1'\n`;
  let text = paragraph.repeat(6) + secrets;
  while (text.length < 4096) text += paragraph;
  return text.slice(0, 4096);
}

/**
 * Redaction on the write that carries the text: a transition that sets a 4 KB prompt with two
 * secrets, with redaction on and off (`raw: "all"`). Both trackers are open at once and take turns,
 * one transition each (which goes first alternating), so the machine's drift weighs on both alike;
 * each round's p50s are compared and the median of five rounds' ratios taken. A first round warms
 * the code up (the JIT, the regular expressions' compiled code) and is reported but not counted:
 * a gateway transitions for hours, and its p50 is not its first thousand writes'. Then redacting
 * that text alone.
 */
async function measureRedaction() {
  const N = 1000;
  const ROUNDS = 5;
  const prompt = promptWithSecrets();
  const all = { on: [], off: [] };
  const ratios = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const trackers = {};
    const samples = { on: [], off: [] };
    for (const mode of ["on", "off"]) {
      trackers[mode] = openTracker({ stateDir: tempDir(`redaction-${mode}`), ...(mode === "off" && { redact: { raw: "all" } }) });
      for (let i = 0; i < N; i++) trackers[mode].create({ requestId: `r${i}`, workspace: "bench" });
    }
    for (let i = 0; i < N; i++) {
      for (const mode of i % 2 ? ["off", "on"] : ["on", "off"])
        samples[mode].push(time(() => trackers[mode].transition(`r${i}`, "queued", { fields: { prompt } }))[0]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const mode of ["on", "off"]) {
      // Each mode did what it says: the key is in the file only without redaction.
      if (trackers[mode].get("r0").prompt.includes("T3BlbkFJ") !== (mode === "off")) throw new Error(`redaction ${mode} wrote the wrong prompt`);
      const root = trackers[mode].options.stateDir;
      trackers[mode].close();
      fs.rmSync(root, { recursive: true, force: true });
      if (round > 0) all[mode].push(...samples[mode]);
    }
    if (round === 0) ratio("warm-up round (not counted): transition p50, redaction on / off", median(samples.on) / median(samples.off), {}, 3);
    else ratios.push(median(samples.on) / median(samples.off));
  }
  summarize("transition setting a 4 KB prompt, redaction on", all.on);
  summarize("transition setting a 4 KB prompt, redaction off", all.off);
  ratio(
    `transition p50, redaction on / off (median of ${ROUNDS} rounds)`,
    median(ratios),
    { target: "<= 1.05", rounds: ratios.map((r) => Number(r.toFixed(3))) },
    3,
  );
  const raw = [];
  for (let i = 0; i < 5000; i++) raw.push(time(() => redactSecrets(prompt))[0]);
  summarize("redact 4 KB (two secrets), alone", raw);
  ratio("redact 4 KB p50 / transition p50 without redaction", median(raw) / median(all.off), { target: "<= 0.05" });
  measureCraftedRedaction(prompt);
}

/**
 * Redacting 100 KB of text crafted against the patterns (one start of a secret, repeated) against
 * 100 KB of the prompt above; tests/unit/redactionCost.test.ts bounds each pattern's time per KB
 * against ordinary text's. `ghs_0_` is what secretlint's GitHub rule was slowest on; `figd_` is the
 * costliest left (secretlint's Figma rule reads on from every `figd_`).
 */
function measureCraftedRedaction(prompt) {
  const SIZE = 100 * 1024;
  const units = {
    prompt,
    ghs_0_: "ghs_0_",
    "ghs_0_a.": "ghs_0_a.",
    figd_: "figd_",
    "glpat-": "glpat-",
    "--api-key=": " --api-key=",
    '"password": "': '"password": "',
  };
  let ordinary = null;
  for (const [name, unit] of Object.entries(units)) {
    const text = unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
    for (let i = 0; i < 5; i++) redactSecrets(text);
    const samples = [];
    for (let i = 0; i < 50; i++) samples.push(time(() => redactSecrets(text))[0]);
    const row = summarize(`redact 100 KB of ${name === "prompt" ? "the 4 KB prompt" : `${name} repeated`}`, samples);
    if (ordinary === null) ordinary = row.p50;
    else ratio(`redact 100 KB of ${name} repeated / of the prompt, p50`, row.p50 / ordinary, { target: "<= 100" }, 1);
  }
}

console.log(`reqwatch bench on ${os.cpus().length} x ${os.cpus()[0]?.model ?? "cpu"}, node ${process.version}\n`);
// BENCH_ONLY=live (or writes, recovery, cli, cleanup, throughput, 100k, bigfolder, dashboard, firstopen, mcp, package, pause, source, claudemem, otel, telemetry, bigexport, mcpflood, scaling, retention, redaction, agentfiles, charts, retentionlive, transitions) runs one group.
const only = process.env.BENCH_ONLY;
const groups = {
  writes: measureWrites,
  recovery: measureRecovery1k,
  cli: measureCli,
  cleanup: measureCleanup,
  throughput: measureThroughput,
  "100k": measureAt100k,
  bigfolder: () => measureBigFolder({ ROOT, writeFiles, tempDir, summarize, ratio, median }),
  live: () => measureLive({ ROOT, writeFiles, tempDir, openTracker, summarize, rows }),
  dashboard: () => measureDashboard({ ROOT, writeFiles, tempDir, openTracker, summarize }),
  firstopen: () => measureFirstOpen({ ROOT, writeFiles, tempDir, summarize, ratio, median }),
  mcp: () => measureMcp({ ROOT, writeFiles, tempDir, openTracker, summarize }),
  package: () => measurePackage({ ROOT, summarize, ratio, median }),
  pause: measurePause,
  source: measureSource,
  claudemem: () => measureClaudeMemQueue({ ROOT, tempDir, summarize, rows }),
  otel: () => measureOtel({ ROOT, tempDir, openTracker, openRoles, summarize, ratio, median }),
  telemetry: () => measureTelemetry({ ROOT, tempDir, summarize, ratio, median, rows }),
  bigexport: () => measureBigExport({ ROOT, tempDir, summarize, ratio, median, rows }),
  mcpflood: () => measureMcpFlood({ ROOT, writeFiles, tempDir, openTracker, rows }),
  scaling: measureScaling,
  retention: measureRetention,
  redaction: measureRedaction,
  agentfiles: () => measureAgentFiles({ ROOT, tempDir, summarize, ratio, median, rows }),
  charts: () => measureCharts({ tempDir, openTracker, openRoles, summarize, ratio, rows }),
  retentionlive: () => measureRetentionLive({ ROOT, writeFiles, tempDir, openTracker, summarize, ratio }),
  // An index write's log pages, then the writes' p99 beside the bare write and the queue's throughput beside its limit.
  transitions: async () => (await measureTransitionWal({ tempDir, writeFiles, openTracker, rows }), await measureWrites(), await measureThroughput()),
};
for (const [name, run] of Object.entries(groups)) if (!only || only === name) await run();
const out = path.join(ROOT, "bench", only ? `results-${only}.json` : "results.json");
fs.writeFileSync(out, `${JSON.stringify({ when: new Date().toISOString(), node: process.version, cpus: os.cpus().length, unit: "ms", rows }, null, 2)}\n`);
console.log(`\nwrote ${path.relative(ROOT, out)}`);
