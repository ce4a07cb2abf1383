import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { openDatabase } from "../../sqlite/openDatabase";
import { ACTIVITY_ROLLUP_TABLE, ACTIVITY_ROLLUP_TRIGGERS, FILL_ACTIVITY_ROLLUP } from "./activityRollup";

/**
 * The telemetry store's schema (`telemetry.db`, reqwatch's own): its tables, the migrations of a
 * store an earlier release made, opening it to write, and setting a damaged one aside. The writer
 * (store/telemetryStore.ts) and the readers (store/queries/) are the only code that knows its tables.
 */

/** The store's file in a state folder's store folder (beside the index). */
export function telemetryStoreFile(storeDir: string): string {
  return path.join(storeDir, "telemetry.db");
}

const DDL = `
CREATE TABLE IF NOT EXISTS lifecycles (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  service TEXT NOT NULL,
  session TEXT,
  trace_id TEXT,
  state TEXT NOT NULL,
  started_at REAL NOT NULL,
  queued_at REAL,
  processing_at REAL,
  finished_at REAL,
  first_at REAL NOT NULL,
  last_at REAL NOT NULL,
  received_at INTEGER NOT NULL,
  prompt TEXT,
  output TEXT,
  error TEXT,
  model TEXT,
  attempt INTEGER,
  last_step TEXT NOT NULL,
  calls INTEGER NOT NULL,
  tools INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  estimated_calls INTEGER NOT NULL DEFAULT 0,
  unpriced_calls INTEGER NOT NULL DEFAULT 0,
  waiting_on TEXT,
  abandoned_by TEXT,
  abandoned_at REAL
);
CREATE INDEX IF NOT EXISTS lifecycles_received ON lifecycles (received_at);
CREATE INDEX IF NOT EXISTS lifecycles_state ON lifecycles (state);
CREATE INDEX IF NOT EXISTS lifecycles_session ON lifecycles (session);
-- The charts count each lifecycle's steps per interval by these times (store/queries/activity.ts).
CREATE INDEX IF NOT EXISTS lifecycles_started ON lifecycles (started_at);
CREATE INDEX IF NOT EXISTS lifecycles_queued ON lifecycles (queued_at) WHERE queued_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS lifecycles_processing ON lifecycles (processing_at) WHERE processing_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS lifecycles_finished ON lifecycles (finished_at) WHERE finished_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS lifecycle_keys (key TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS lifecycle_keys_seq ON lifecycle_keys (seq);
CREATE TABLE IF NOT EXISTS steps (
  seq INTEGER NOT NULL,
  step_key TEXT NOT NULL,
  at REAL NOT NULL,
  name TEXT NOT NULL,
  summary TEXT NOT NULL,
  detail TEXT NOT NULL,
  facts TEXT NOT NULL,
  start_at REAL,
  parent_key TEXT,
  -- The call or tool use the step told of (its part's kind and id): a lifecycle's page draws the steps of one part as one bar.
  part_key TEXT,
  PRIMARY KEY (seq, step_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS parts (
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  at REAL NOT NULL,
  fields TEXT NOT NULL,
  PRIMARY KEY (seq, kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS unmapped (
  service TEXT NOT NULL,
  signal TEXT NOT NULL,
  name TEXT NOT NULL,
  count INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY (service, signal, name)
) WITHOUT ROWID;
-- What a dialect knows and shows as no lifecycle on purpose (Codex's inner spans, a stalled-jobs check that found none): counted apart from unmapped.
CREATE TABLE IF NOT EXISTS unshown (
  known_by TEXT NOT NULL,
  service TEXT NOT NULL,
  signal TEXT NOT NULL,
  name TEXT NOT NULL,
  count INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY (known_by, service, signal, name)
) WITHOUT ROWID;
-- How far each agent's file was read (lib/telemetry/agentFiles): the next read starts there, and
-- the mapping goes on with the state it had (the turn the file is in). Never beside the agent's files.
CREATE TABLE IF NOT EXISTS agent_files (
  path TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  skipping INTEGER NOT NULL,
  state TEXT NOT NULL,
  session TEXT,
  lines INTEGER NOT NULL,
  malformed INTEGER NOT NULL,
  oversized INTEGER NOT NULL,
  read_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS agent_files_session ON agent_files (session);
CREATE TABLE IF NOT EXISTS intake (
  signal TEXT PRIMARY KEY,
  exports INTEGER NOT NULL,
  records INTEGER NOT NULL,
  rejected INTEGER NOT NULL,
  last_at INTEGER NOT NULL
) WITHOUT ROWID;
${ACTIVITY_ROLLUP_TABLE}
${ACTIVITY_ROLLUP_TRIGGERS}
`;

/**
 * A store made by an earlier release, brought to this one's schema: each change once, in order,
 * `user_version` counting those made (the tables themselves are made by DDL, which leaves existing
 * ones as they are).
 */
const MIGRATIONS: readonly string[] = [
  // Steps say when they began and what they happened inside: a lifecycle's page draws them on a timeline.
  "ALTER TABLE steps ADD COLUMN start_at REAL; ALTER TABLE steps ADD COLUMN parent_key TEXT;",
  // A cost not said by the client is estimated at list prices, or counted as unpriced: never $0.
  "ALTER TABLE lifecycles ADD COLUMN estimated_calls INTEGER NOT NULL DEFAULT 0; ALTER TABLE lifecycles ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;",
  // A step says which call or tool use it told of: a lifecycle's page draws every record of one as one bar.
  "ALTER TABLE steps ADD COLUMN part_key TEXT;",
  // A turn read from an agent's own files says what it waits on, and whether its program ended mid-way: its stuck reason says so.
  "ALTER TABLE lifecycles ADD COLUMN waiting_on TEXT; ALTER TABLE lifecycles ADD COLUMN abandoned_by TEXT; ALTER TABLE lifecycles ADD COLUMN abandoned_at REAL;",
  // The charts read per-interval rollups, not the lifecycles: counted once from what the store holds (store/activityRollup.ts).
  `${ACTIVITY_ROLLUP_TABLE}\n${FILL_ACTIVITY_ROLLUP}`,
];

/** Make the tables, or bring a store an earlier release made to this schema. */
function makeSchema(db: Database.Database): void {
  const existed = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'lifecycles'").get() !== undefined;
  db.transaction(() => {
    const version = existed ? (db.pragma("user_version", { simple: true }) as number) : MIGRATIONS.length;
    for (const change of MIGRATIONS.slice(version)) db.exec(change);
    db.exec(DDL);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  })();
}

const DAMAGE = new Set(["SQLITE_CORRUPT", "SQLITE_NOTADB"]);
/** A failure that says the file is damaged or not SQLite: the writer sets it aside and starts a new one. */
export const isDamage = (error: unknown) => DAMAGE.has((error as { code?: string }).code ?? "");

/** The file at the path, as the file system names it (null: none): the writer notices another file put in its place. */
export function identityOf(file: string): { dev: number; ino: number } | null {
  try {
    const { dev, ino } = fs.statSync(file);
    return { dev, ino };
  } catch {
    return null;
  }
}

/**
 * The store's file opened to write, made when missing; one that is not an SQLite database or is
 * damaged is set aside (renamed beside it, kept for whoever wants to look at it) and a new one
 * made: what was received is reqwatch's own copy, and the dashboard must go on receiving.
 */
export function openStoreFile(file: string): [Database.Database, { dev: number; ino: number }] {
  for (let attempt = 0; ; attempt++) {
    let db: Database.Database | null = null;
    try {
      db = openDatabase(file);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("busy_timeout = 5000");
      makeSchema(db);
      return [db, identityOf(file)!];
    } catch (error) {
      db?.close();
      if (!isDamage(error) || attempt > 0) throw error;
      setAside(file);
    }
  }
}

/** What a damaged store is renamed to: `telemetry.db.damaged-<UTC time>`, with its write-ahead log beside it. */
const SET_ASIDE = ".damaged-";

export function setAside(file: string): void {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const to = `${file}${SET_ASIDE}${stamp}`;
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      fs.renameSync(file + suffix, to + suffix);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  console.error(
    `reqwatch: the telemetry store ${file} is damaged; it was set aside as ${to} and a new one started (what was received before is in the copy; delete it once you no longer need it).`,
  );
}

/** The damaged stores set aside beside `file`, newest first: the Health page names them. */
export function setAsideStores(file: string): string[] {
  const name = path.basename(file) + SET_ASIDE;
  try {
    return fs
      .readdirSync(path.dirname(file))
      .filter((entry) => entry.startsWith(name) && !entry.endsWith("-wal") && !entry.endsWith("-shm"))
      .sort()
      .reverse()
      .map((entry) => path.join(path.dirname(file), entry));
  } catch {
    return [];
  }
}
