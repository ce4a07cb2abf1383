import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll } from "vitest";
import { loadPg } from "../../lib/postgres/pgDriver";
import { openSharedTracker } from "../../lib/postgres/sharedTracker";
import type { SharedTracker } from "../../lib/types";
import { freePort } from "./processes";

const PG_BIN = "/usr/lib/postgresql/15/bin";
const run = promisify(execFile);

export interface PostgresCluster {
  /** The folder of its Unix socket (and its data, its log). */
  dir: string;
  port: number;
  /** The postgres user's password, asked on 127.0.0.1 (the socket trusts the local user). */
  password: string;
  /** A new, empty database of its own, and its URL (over the socket, no password). */
  newDatabase(): Promise<string>;
  /** The URL of `database` over TCP on 127.0.0.1 with `password`. */
  tcpUrl(database: string, password: string): string;
  stop(): Promise<void>;
}

/** Argv to run `command` as the postgres user when this is root (PostgreSQL refuses to run as root). */
function asPostgres(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
}

/**
 * A throwaway PostgreSQL 15 cluster (Debian's): initdb into a temporary folder, its socket there,
 * TCP on 127.0.0.1 and a free port with a password, durable defaults. No skip when it is missing:
 * the tests that need it fail saying what to install (.ci/run installs it).
 */
export async function aPostgresCluster(): Promise<PostgresCluster> {
  if (!fs.existsSync(`${PG_BIN}/initdb`)) {
    throw new Error(`PostgreSQL 15 is not installed (${PG_BIN}/initdb is missing): apt-get install postgresql-15, as .ci/run does.`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-pg-"));
  const password = "pw-" + Math.random().toString(36).slice(2);
  fs.writeFileSync(path.join(dir, "pwfile"), `${password}\n`);
  if (process.getuid?.() === 0) execFileSync("chown", ["-R", "postgres:postgres", dir]);
  const data = path.join(dir, "data");
  const port = await freePort();
  try {
    const initdb = asPostgres(`${PG_BIN}/initdb`, [
      "-D",
      data,
      "-U",
      "postgres",
      "--auth-local=trust",
      "--auth-host=scram-sha-256",
      `--pwfile=${path.join(dir, "pwfile")}`,
      "--no-sync",
    ]);
    await run(...initdb);
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`;
    await run(...asPostgres(`${PG_BIN}/pg_ctl`, ["-D", data, "-l", path.join(dir, "log"), "-w", "-o", options, "start"]));
  } catch (error) {
    // What initdb or pg_ctl said is in the error; the half-made cluster goes.
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let made = 0;
  const socketUrl = (database: string) => `postgresql://postgres@localhost/${database}?host=${encodeURIComponent(dir)}&port=${port}`;
  return {
    dir,
    port,
    password,
    async newDatabase() {
      const database = `t${++made}_${process.pid}`;
      const { Client } = await loadPg();
      const admin = new Client({ connectionString: socketUrl("postgres") });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
      await admin.end();
      return socketUrl(database);
    },
    tcpUrl: (database, pw) => `postgresql://postgres:${encodeURIComponent(pw)}@127.0.0.1:${port}/${database}`,
    async stop() {
      await run(...asPostgres(`${PG_BIN}/pg_ctl`, ["-D", data, "-m", "immediate", "-w", "stop"]));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One cluster for the test file, started before its tests and stopped after them: `cluster()` gives it. */
export function postgresForFile(): () => PostgresCluster {
  let cluster: PostgresCluster | null = null;
  beforeAll(async () => {
    cluster = await aPostgresCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);
  return () => {
    if (!cluster) throw new Error("the PostgreSQL cluster did not start");
    return cluster;
  };
}

const opened: SharedTracker[] = [];
afterEach(async () => {
  for (const tracker of opened.splice(0)) await tracker.close();
});

/** A shared tracker on `url`, closed after the test. */
export async function aSharedTracker(url: string, options: Parameters<typeof openSharedTracker>[1] = {}): Promise<SharedTracker> {
  const tracker = await openSharedTracker(url, options);
  opened.push(tracker);
  return tracker;
}

/** Run `sql` on the database at `url` with a connection of the test's own. */
export async function sqlOn<Row = Record<string, unknown>>(url: string, sql: string, values: unknown[] = []): Promise<Row[]> {
  const { Client } = await loadPg();
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql, values)).rows;
  } finally {
    await client.end();
  }
}
