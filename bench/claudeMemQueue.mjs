// `BENCH_ONLY=claudemem`: the dashboard beside a big claude-mem queue: MESSAGES pending
// messages of twice TEXT_BYTES each, as a stuck claude-mem leaves them. The read API's latency and
// the server's memory with the queue as a source while its owner writes (a message arrives, one is
// claimed, one finishes, every second), beside a server with no source (the baseline), in turns.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { freePort, startServer } from "./server.mjs";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3");
const MESSAGES = 20_000;
const TEXT_BYTES = 10_000;
const LOAD_MS = Number(process.env.BENCH_CLAUDE_MEM_MS ?? 40_000);
/** How often the read API is asked. */
const EVERY_MS = 50;
/** Turns each server is asked in, alternating which goes first. */
const ROUNDS = 4;

/** claude-mem's queue as v12.4.5 makes it (g6, WAL): its text before the columns that say its state. */
function bigQueue(file, now) {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec(`CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT UNIQUE NOT NULL, memory_session_id TEXT, project TEXT NOT NULL, platform_source TEXT, user_prompt TEXT, started_at_epoch INTEGER NOT NULL, completed_at_epoch INTEGER, status TEXT NOT NULL DEFAULT 'active');
    CREATE TABLE pending_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_db_id INTEGER NOT NULL REFERENCES sdk_sessions(id), content_session_id TEXT NOT NULL, tool_use_id TEXT, message_type TEXT NOT NULL, tool_name TEXT, tool_input TEXT, tool_response TEXT, cwd TEXT, last_user_message TEXT, last_assistant_message TEXT, prompt_number INTEGER, status TEXT NOT NULL DEFAULT 'pending', retry_count INTEGER NOT NULL DEFAULT 0, created_at_epoch INTEGER NOT NULL, started_processing_at_epoch INTEGER, completed_at_epoch INTEGER, failed_at_epoch INTEGER, agent_type TEXT, agent_id TEXT, worker_pid INTEGER);
    CREATE INDEX idx_pending_messages_session ON pending_messages(session_db_id);
    CREATE INDEX idx_pending_messages_status ON pending_messages(status);`);
  db.transaction(() => {
    for (let s = 0; s < 50; s++)
      db.prepare("INSERT INTO sdk_sessions (content_session_id, project, started_at_epoch) VALUES (?, ?, ?)").run(
        `session-${s}`,
        `project-${s % 8}`,
        now - 86_400_000,
      );
    const insert = db.prepare(
      "INSERT INTO pending_messages (session_db_id, content_session_id, message_type, tool_name, tool_input, tool_response, status, created_at_epoch) VALUES (?, ?, 'observation', 'Bash', ?, ?, 'pending', ?)",
    );
    // Over twice claude-mem's pending limit: the older half is stuck.
    for (let i = 0; i < MESSAGES; i++)
      insert.run((i % 50) + 1, `session-${i % 50}`, text("input", i), text("output", i), now - Math.round(((MESSAGES - i) * 7_200_000) / MESSAGES));
  })();
  return db;
}

function text(kind, i) {
  const line = `${kind} ${i}: npm test -- --shard ${i % 40} passed in ${i % 97} ms; `;
  return line.repeat(Math.ceil(TEXT_BYTES / line.length)).slice(0, TEXT_BYTES);
}

const rssMB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;

/**
 * The read API as open dashboards ask it: a request every EVERY_MS on a fixed schedule for `ms`,
 * each timed from when it was due, so a stalled server delays every request due meanwhile, as it
 * does a person's (a client that waits for each answer before it asks again would count a stall
 * once).
 */
async function load(server, paths, ms, samples) {
  const start = performance.now();
  const asked = [];
  for (let i = 0; i * EVERY_MS < ms; i++) {
    const due = start + i * EVERY_MS;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
    const url = `${server.url}${paths[i % paths.length]}`;
    asked.push(
      fetch(url).then(async (response) => {
        if (!response.ok) throw new Error(`${url} answered ${response.status}`);
        await response.arrayBuffer();
        samples.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(asked);
}

export async function measureClaudeMemQueue({ ROOT, tempDir, summarize, rows }) {
  const figure = (name, value, unit, target) => {
    rows.push({ name, value: Math.round(value), unit, ...(target && { target }) });
    console.log(`${name.padEnd(56)} ${String(Math.round(value)).padStart(8)} ${unit}${target ? `   target ${target}` : ""}`);
  };
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-if-stale.mjs")], { stdio: "inherit" });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-bench-claude-mem-queue-"));
  const file = path.join(dir, "claude-mem.db");
  console.log(`\nwriting a claude-mem queue of ${MESSAGES.toLocaleString("en")} pending messages of ${(2 * TEXT_BYTES) / 1000} KB...`);
  const owner = bigQueue(file, Date.now());
  const folderApi = ["/api/status", "/api/sources", "/api/requests?limit=50", "/api/queues"];
  const servers = [];
  const stateDirs = [];
  try {
    // Both servers run at once and are asked in turns, so whatever else the machine does weighs on both alike.
    const start = async (env) => {
      stateDirs.push(tempDir("claude-mem-queue"));
      const server = await startServer(ROOT, stateDirs.at(-1), { REQWATCH_OTLP_PORT: String(await freePort()), ...env });
      servers.push(server);
      return server;
    };
    const baseline = await start({});
    const server = await start({ REQWATCH_SOURCES: JSON.stringify([`claude-mem:${file}`]) });
    // Until the source is counted in full (a first look reads a big table in slices).
    const counted = performance.now();
    for (;;) {
      const { sources } = await (await fetch(`${server.url}/api/sources`)).json();
      if (sources[0]?.readAt && !sources[0].counting && !sources[0].error) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const countedMs = performance.now() - counted;
    // The owner at claude-mem's pace: a message arrives, the oldest is claimed, the one claimed before finishes.
    let claimed = null;
    const writer = setInterval(() => {
      const at = Date.now();
      owner
        .prepare(
          "INSERT INTO pending_messages (session_db_id, content_session_id, message_type, tool_name, tool_input, tool_response, status, created_at_epoch) VALUES (1, 'session-0', 'observation', 'Edit', ?, ?, 'pending', ?)",
        )
        .run(text("input", at), text("output", at), at);
      if (claimed !== null) owner.prepare("UPDATE pending_messages SET status = 'processed', completed_at_epoch = ? WHERE id = ?").run(at, claimed);
      claimed = owner.prepare("SELECT id FROM pending_messages WHERE status = 'pending' ORDER BY id LIMIT 1").pluck().get();
      owner
        .prepare("UPDATE pending_messages SET status = 'processing', started_processing_at_epoch = ?, worker_pid = ? WHERE id = ?")
        .run(at, process.pid, claimed);
    }, 1000);
    const peak = new Map(servers.map((one) => [one, 0]));
    const sampler = setInterval(() => {
      for (const one of servers) peak.set(one, Math.max(peak.get(one), rssMB(one.child.pid)));
    }, 250);
    const alone = [];
    const withSource = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const turns = [
          () => load(baseline, folderApi, LOAD_MS / ROUNDS, alone),
          () =>
            load(
              server,
              [...folderApi, "/api/requests?source=claude-mem&limit=50", "/api/requests?source=claude-mem&stuck=1&limit=50"],
              LOAD_MS / ROUNDS,
              withSource,
            ),
        ];
        for (const turn of round % 2 ? turns.reverse() : turns) await turn();
      }
    } finally {
      clearInterval(writer);
      clearInterval(sampler);
    }
    const { sources } = await (await fetch(`${server.url}/api/sources`)).json();
    summarize("baseline: the dashboard's read API, no source", alone);
    figure("baseline: server RSS, no source (peak)", peak.get(baseline), "MB");
    summarize(`the read API beside a claude-mem queue of ${MESSAGES.toLocaleString("en")} x ${(2 * TEXT_BYTES) / 1000} KB`, withSource, {
      target: "p99 <= 100 ms",
    });
    figure("server RSS beside that queue (peak)", peak.get(server), "MB", "<= 300");
    figure("the queue's first full count, after the server started", countedMs, "ms");
    console.log(`  the source said: ${sources[0].total} rows, ${sources[0].stuck} stuck, a look ${sources[0].readMs} ms`);
  } finally {
    for (const one of servers) await one.stop();
    for (const stateDir of stateDirs) fs.rmSync(stateDir, { recursive: true, force: true });
    owner.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
