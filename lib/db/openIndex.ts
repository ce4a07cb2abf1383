import { randomUUID } from "../process/crypto";
import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { isReqwatchError, ReqwatchError } from "../model/errors";
import { sleepSync } from "../process/sleepSync";
import { DROP_COUNTING_TRIGGERS, INDEX_DDL, INDEX_SCHEMA_VERSION, RECOUNT } from "./ddl";
import { openDatabase } from "../sqlite/openDatabase";
import { statement } from "./statements";

/** How long a writer waits for the writers' lock before SQLITE_BUSY (the connection's `busy_timeout` too). */
export const LOCK_TIMEOUT_MS = 10_000;

export type IndexDb = Database.Database;

export interface OpenedIndex {
  db: IndexDb;
  /**
   * True until one full reconciliation has completed against this index (it was missing, corrupt,
   * from another schema, or a rebuild was cut short): the caller rebuilds it from the files.
   */
  needsRebuild: boolean;
  generation: string;
  /** Which file `db` is (stat'ed right after it was opened): a deleted or replaced index.db is another. */
  identity: FileIdentity | null;
}

export interface FileIdentity {
  dev: number;
  ino: number;
}

export function fileIdentity(file: string): FileIdentity | null {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  return stat ? { dev: stat.dev, ino: stat.ino } : null;
}

/**
 * The file the writers' lock is taken on, beside index.db: an empty SQLite database attached to
 * every index connection as `writers`, so BEGIN IMMEDIATE locks it too. reqwatch never deletes or
 * replaces it (index.db may be deleted, and is replaced when damaged), so writers holding two
 * different index.db files still exclude each other. Deleting it while writers run is not safe.
 */
function writersLockFile(indexFile: string): string {
  return path.join(path.dirname(indexFile), "writers.lock");
}

/**
 * Delete index.db with its write-ahead log and shared memory (it is rebuildable from the files).
 * The log and shared memory go first: another process may create a new index.db the moment the old
 * one is gone, with a log of its own, and removing the log after would take it from under that
 * process (its next connection would start another log beside the first: a corrupt index).
 */
export function removeIndexFiles(file: string): void {
  for (const suffix of ["-wal", "-shm", ""]) fs.rmSync(file + suffix, { force: true });
}

function isNotADatabase(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT";
}

/** A connection to an index another connection of this process has opened and set up (a rebuild thread's own). */
export function connectIndex(file: string): IndexDb {
  return connect(file);
}

function connect(file: string): IndexDb {
  const db = openDatabase(file);
  // Writers queue on BEGIN IMMEDIATE; wait for each other rather than fail.
  db.pragma(`busy_timeout = ${LOCK_TIMEOUT_MS}`);
  retryBusy(() => db.pragma("journal_mode = WAL"));
  // The files are the source of truth and the index is rebuildable, so a commit lost to a power
  // cut is repaired by reconciliation; NORMAL keeps each write to one fsync (the file's).
  db.pragma("synchronous = NORMAL");
  // Room for the indexes of ~100k requests: a rebuild inserts into five b-trees at once.
  db.pragma("cache_size = -65536");
  // Checkpoints run beside the writes (lib/db/checkpoints.ts); a write checkpoints itself only past this.
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  // Created by SQLite, never opened with fs: closing any other descriptor of a file drops every
  // lock this process holds on it. WAL: its write lock costs what the index's does.
  db.prepare("ATTACH DATABASE ? AS writers").run(writersLockFile(file));
  retryBusy(() => db.pragma("writers.journal_mode = WAL"));
  return db;
}

/**
 * Create `index.db` empty if it is missing, and remove a write-ahead log left beside a deleted one
 * (it must not be replayed into the new database). Only the process that created the file removes
 * it; another opening at the same moment waits until the creator has written the file, so it never
 * connects to a log that is about to be removed.
 */
function createIndexFile(file: string): void {
  waitForTheDeleter(file);
  let fd: number;
  try {
    fd = fs.openSync(file, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw ioError(error);
    waitWhileBeingCreated(file);
    return;
  }
  fs.closeSync(fd);
  for (const suffix of ["-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
}

/** How long a log left beside a missing index.db is given to go before the index is made again. */
const DELETER_GRACE_MS = 250;

/**
 * index.db missing, its log or shared memory still there: whoever deleted it (`rm index.db*` removes
 * index.db first) may be about to remove them. A new index made now would lose its own log to that
 * removal (two logs on one file: a corrupt index), so the deleter is given a moment to finish.
 */
function waitForTheDeleter(file: string): void {
  const deadline = Date.now() + DELETER_GRACE_MS;
  while (!fs.existsSync(file) && (fs.existsSync(`${file}-wal`) || fs.existsSync(`${file}-shm`)) && Date.now() < deadline) sleepSync(2);
}

function waitWhileBeingCreated(file: string): void {
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    // Empty and young: its creator is between creating and writing it (an old empty one was left by a crash).
    if (!stat || stat.size > 0 || Date.now() - stat.mtimeMs > LOCK_TIMEOUT_MS || Date.now() > deadline) return;
    sleepSync(5);
  }
}

/** A connection's first statements can meet another process that is switching the new file to WAL: try again. */
function retryBusy<T>(fn: () => T): T {
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      return fn();
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline) throw error;
    }
    sleepSync(5);
  }
}

/**
 * Open (or create) `index.db`. A missing, unreadable or out-of-date index is replaced by an empty
 * one marked `fresh`, and the caller rebuilds it from the files.
 */
export function openIndex(file: string): OpenedIndex {
  createIndexFile(file);
  let db: IndexDb | undefined;
  try {
    db = connect(file);
    db.prepare("SELECT count(*) FROM sqlite_master").get();
  } catch (error) {
    db?.close();
    if (!isNotADatabase(error)) throw ioError(error);
    removeIndexFiles(file);
    db = connect(file);
  }
  const identity = fileIdentity(file);

  // The writers' lock with SQLite's own busy wait: opening is rare, and withWritersLock (writeLock.ts)
  // is built on this module's connection.
  const setUp = db.transaction(() => {
    const existing = tableExists(db, "meta") ? readMeta(db, "schema_version") : undefined;
    let fresh = existing === undefined;
    if (existing !== undefined && Number(existing) !== INDEX_SCHEMA_VERSION) {
      dropAll(db);
      fresh = true;
    }
    db.exec(INDEX_DDL);
    if (fresh) {
      db.prepare("DELETE FROM meta").run();
      const insert = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
      insert.run("schema_version", String(INDEX_SCHEMA_VERSION));
      insert.run("generation", randomUUID());
      insert.run("created_at", String(Date.now()));
    }
    const generation = readMeta(db, "generation") as string;
    const needsRebuild = readMeta(db, "reconciled_at") === undefined;
    // A rebuild fills the index without the counting triggers, then counts once and creates them in
    // the transaction that sets reconciled_at (lib/recovery/recover.ts): a reconciled index has them.
    if (needsRebuild) db.exec(DROP_COUNTING_TRIGGERS);
    return { needsRebuild, generation };
  });
  return { db, identity, ...setUp.immediate() };
}

export function readMeta(db: IndexDb, key: string): string | undefined {
  return db.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(key) as string | undefined;
}

export function writeMeta(db: IndexDb, key: string, value: string): void {
  db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
}

/**
 * An index a rebuild fills newest first: every request file whose times are later than `belowMs`
 * (give or take the file system's clock tick) had its row when the rebuild listed the folder at
 * `listedAt`; a file changed since has a later modification time. Only ever lowered (and `listedAt`
 * only moved back), so two rebuilds filling one index (a command's page and a follower) each leave it true.
 */
export interface IndexedDownTo {
  belowMs: number;
  listedAt: number;
}

const INDEXED_DOWN_TO = "indexed_down_to";

export function lowerIndexedDownTo(db: IndexDb, { belowMs, listedAt }: IndexedDownTo): void {
  const known = indexedDownTo(db);
  if (known && known.belowMs <= belowMs && known.listedAt <= listedAt) return;
  const lowered = known ? { belowMs: Math.min(known.belowMs, belowMs), listedAt: Math.min(known.listedAt, listedAt) } : { belowMs, listedAt };
  writeMeta(db, INDEXED_DOWN_TO, JSON.stringify(lowered));
}

export function indexedDownTo(db: IndexDb): IndexedDownTo | null {
  const value = readMeta(db, INDEXED_DOWN_TO);
  return value === undefined ? null : (JSON.parse(value) as IndexedDownTo);
}

function tableExists(db: IndexDb, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function dropAll(db: IndexDb): void {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  for (const table of tables) db.exec(`DROP TABLE IF EXISTS "${table}"`);
}

function ioError(error: unknown): ReqwatchError {
  if (isReqwatchError(error)) return error;
  return new ReqwatchError("IO_ERROR", `Cannot open the index: ${(error as Error).message}`, undefined, { cause: error });
}

/**
 * The write-ahead log's length at which a commit checkpoints it itself: a safety net for a process
 * that writes without ever giving its event loop a turn. Otherwise the checkpoints run on a timer,
 * off the write path (lib/db/checkpoints.ts): SQLite's default put a checkpoint, with its two
 * fsyncs, inside an ordinary write now and then (docs/PERFORMANCE.md, "The write tail").
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/** WAL pages between checkpoints while a rebuild fills the index (SQLite's default is 1000: a checkpoint every few batches). */
const REBUILD_CHECKPOINT_PAGES = 16_384;

/**
 * Run a rebuild's writes without syncing them, then sync everything before the caller marks the
 * index complete. A power cut in the middle may leave the index damaged, but an index not marked
 * complete is rebuilt at its next open (and a damaged one is replaced: lib/recovery/indexGuard.ts);
 * the request files, the source of truth, are never touched by this.
 */
export function withUnsyncedWrites<T>(db: IndexDb, fn: () => T): T {
  db.pragma("synchronous = OFF");
  db.pragma(`wal_autocheckpoint = ${REBUILD_CHECKPOINT_PAGES}`);
  try {
    return fn();
  } finally {
    db.pragma("synchronous = NORMAL");
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    // Under NORMAL a checkpoint syncs the log first, then the database: what the rebuild wrote is on disk.
    db.pragma("wal_checkpoint(PASSIVE)");
  }
}

/** The end of a rebuild, which filled the index without the counting triggers: count once, put them back. */
export function recount(db: IndexDb): void {
  db.exec(RECOUNT);
}

/** Read one row of two tables: a read of their pages, not a scan (the index guard runs it every second). Throws what SQLite finds. */
export function probeIndex(db: IndexDb): void {
  statement(db, "SELECT key FROM meta LIMIT 1").get();
  statement(db, "SELECT id FROM requests LIMIT 1").get();
}

/** SQLite's count of commits by other connections (per connection: a reopened index starts anew). */
export function dataVersion(db: IndexDb): number {
  return db.pragma("data_version", { simple: true }) as number;
}
