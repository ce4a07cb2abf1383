// The shared-store prototype of docs/PERFORMANCE.md, measured: a throwaway PostgreSQL 15 cluster (the
// distribution's, in a temporary folder, on a Unix socket only), the same queue steps as a reqwatch
// worker (bench/workers/postgres.cjs), and its completed/s with 2 worker processes, beside the
// present store's in the same run.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./server.mjs";

const PG_BIN = "/usr/lib/postgresql/15/bin";

/** Run as the postgres user when this is root (PostgreSQL refuses to run as root). */
function asPostgres(command, args) {
  const root = process.getuid?.() === 0;
  return execFileSync(root ? "runuser" : command, root ? ["-u", "postgres", "--", command, ...args] : args, { stdio: ["ignore", "pipe", "pipe"] }).toString();
}

export async function startPostgres() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-bench-pg-"));
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres:postgres", dir]);
  const data = path.join(dir, "data");
  const port = await freePort();
  asPostgres(`${PG_BIN}/initdb`, ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  // The defaults a production server keeps for durability: fsync on, synchronous_commit on.
  asPostgres(`${PG_BIN}/pg_ctl`, ["-D", data, "-l", path.join(dir, "log"), "-w", "-o", `-p ${port} -k ${dir} -c listen_addresses=''`, "start"]);
  return {
    host: dir,
    port,
    stop() {
      asPostgres(`${PG_BIN}/pg_ctl`, ["-D", data, "-m", "fast", "-w", "stop"]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `requests` queued requests; `workers` processes claim and complete them all: completed per second, and double claims. */
export async function postgresThroughput(ROOT, server, requests, workers) {
  const { default: pg } = await import("pg");
  const db = new pg.Client({ host: server.host, port: server.port, user: "postgres", database: "postgres" });
  await db.connect();
  await db.query(`DROP TABLE IF EXISTS transitions, requests;
    CREATE TABLE requests (id text PRIMARY KEY, workspace text NOT NULL, state text NOT NULL, created_at bigint NOT NULL, updated_at bigint NOT NULL,
      attempt int NOT NULL DEFAULT 0, claim_token text, heartbeat_at bigint, doc jsonb NOT NULL DEFAULT '{}');
    CREATE INDEX requests_queued ON requests (created_at, id) WHERE state = 'queued';
    CREATE TABLE transitions (seq bigserial PRIMARY KEY, request_id text NOT NULL REFERENCES requests, from_state text, to_state text NOT NULL, at bigint NOT NULL, token text);`);
  const now = Date.now();
  await db.query(
    "INSERT INTO requests (id, workspace, state, created_at, updated_at) SELECT 'q' || i, 'bench', 'queued', $1::bigint + i, $1::bigint + i FROM generate_series(0, $2::int - 1) i",
    [now, requests],
  );
  const results = await Promise.all(
    Array.from(
      { length: workers },
      () =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [path.join(ROOT, "bench/workers/postgres.cjs"), server.host, String(server.port)], {
            stdio: ["ignore", "pipe", "inherit"],
          });
          let out = "";
          child.stdout.on("data", (chunk) => (out += chunk));
          child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`postgres worker exited ${code}`))));
        }),
    ),
  );
  const completed = results.reduce((sum, r) => sum + r.completed, 0);
  const seconds = (Math.max(...results.map((r) => r.last)) - Math.min(...results.map((r) => r.first).filter(Boolean))) / 1000;
  const { rows } = await db.query(
    "SELECT count(*)::int AS n FROM (SELECT request_id FROM transitions WHERE to_state = 'processing' GROUP BY request_id HAVING count(*) > 1) twice",
  );
  await db.end();
  if (completed !== requests) throw new Error(`postgres prototype completed ${completed} of ${requests}`);
  return { perSecond: Math.round(completed / seconds), doubleClaims: rows[0].n };
}
