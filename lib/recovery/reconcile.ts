import fs from "node:fs";
import path from "node:path";
import type { TrackerContext } from "../store/context";
import { withWritersLock } from "../db/writeLock";
import { REQUEST_ID_PATTERN } from "../model/ids";
import { indexedFingerprint, indexedFingerprints, isIndexed } from "../db/requestFingerprints";
import { forgetUnreadable, knownUnreadable, recordUnreadable } from "../db/unreadableFiles";
import { removeRequest, requestFileKey, writeIndexRows } from "../db/upsertRequest";
import { lowerIndexedDownTo } from "../db/openIndex";
import { fingerprintOf, sameFingerprint, type FileFingerprint } from "../fs/fingerprint";
import { readBatch, readForIndex, type FileRead } from "./fileRead";
import { readInParallel } from "./parallelReads";
import type { UnreadableReport } from "../types";

export interface ReconcileReport {
  /** Request files found. */
  scanned: number;
  /** Files parsed because they were new or changed since the index saw them. */
  parsed: number;
  /** Index rows added, updated or removed. */
  fixes: number;
  unreadable: UnreadableReport[];
  /** Threads that read the files beside the writing one (a rebuild of a big folder; else 0). */
  readerThreads: number;
  /** False when a rebuild stopped once its caller had what it asked for (`ctx.rebuild.settled`): the index is not complete. */
  complete: boolean;
}

/** Parse and commit changed files in batches, so the writers' lock is never held for long. */
const BATCH = 500;

interface Listed {
  id: string;
  /** Null in a rebuild's listing (names only). */
  fingerprint: FileFingerprint | null;
  /** A newest-first rebuild's listing: the file's modification time, or its own latest time where those say nothing (-1: gone). */
  mtimeMs?: number;
}

type Ingested = { fixes: number; unreadable: UnreadableReport[]; readerThreads: number; complete?: boolean };

const BAD_NAME = "the file name is not a valid request id";

/** Whether a name in `requests/` looks like a request file but cannot be one (`bad name.json`). */
export function isBadRequestFileName(name: string): boolean {
  return name.endsWith(".json") && !name.startsWith(".") && !REQUEST_ID_PATTERN.test(name.slice(0, -".json".length));
}

/**
 * The watcher saw these badly named files change: list the ones that exist as unreadable (as
 * reconciliation does), forget the ones that have gone.
 */
export function noteBadFileNames(ctx: TrackerContext, names: readonly string[]): void {
  withWritersLock(ctx, () => {
    for (const name of names) {
      const file = `requests/${name}`;
      let fingerprint: FileFingerprint | null = null;
      try {
        fingerprint = fingerprintOf(fs.lstatSync(path.join(ctx.dir.requestsDir, name)));
      } catch {
        forgetUnreadable(ctx.db, file);
        continue;
      }
      recordUnreadable(ctx.db, file, BAD_NAME, fingerprint, ctx.now());
    }
  });
}

function readRequestsDir(ctx: TrackerContext): fs.Dirent[] {
  try {
    return fs.readdirSync(ctx.dir.requestsDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** One directory entry: a request file with its fingerprint (none when `withStat` is false), a bad name (reported), or nothing. */
function listEntry(ctx: TrackerContext, name: string, listed: Listed[], unreadable: UnreadableReport[], withStat = true): void {
  // Temp files (ours and other writers' `*.tmp`) and a gateway's by-workspace copies are not requests.
  if (!name.endsWith(".json") || name.startsWith(".")) return;
  if (isBadRequestFileName(name)) {
    unreadable.push({ file: `requests/${name}`, reason: BAD_NAME });
    return;
  }
  if (!withStat) {
    listed.push({ id: name.slice(0, -".json".length), fingerprint: null });
    return;
  }
  try {
    listed.push({ id: name.slice(0, -".json".length), fingerprint: fingerprintOf(fs.lstatSync(path.join(ctx.dir.requestsDir, name))) });
  } catch {
    // Deleted between readdir and stat: the removal pass handles it.
  }
}

/**
 * Modification times that say nothing of what the files hold (a folder copied, restored from a
 * backup, checked out, synced): most of a sample of the files were last updated well before their
 * modification time. A page that waits on the newest files then orders them by their own times.
 * Either order gives the same page; this picks the quicker.
 */
const MTIMES_SAY_NOTHING_AFTER_MS = 60_000;
const MTIME_SAMPLE = 64;

function mtimesSayNothing(ctx: TrackerContext, listed: readonly Listed[]): boolean {
  if (listed.length === 0) return false;
  // Spread over the listing (the directory's order, not the files' times), so one recent burst does not decide.
  const sample = Array.from({ length: Math.min(MTIME_SAMPLE, listed.length) }, (_, i) => listed[Math.floor((i * listed.length) / MTIME_SAMPLE)]!.id);
  const mtimes = new Map(readBatch("stat", ctx.dir.requestsDir, sample));
  const gaps = readBatch("times", ctx.dir.requestsDir, sample)
    .filter(([id, own]) => own >= 0 && Number.isFinite(own) && mtimes.get(id)! >= 0)
    .map(([id, own]) => mtimes.get(id)! - own);
  return gaps.filter((gap) => gap > MTIMES_SAY_NOTHING_AFTER_MS).length * 2 > gaps.length;
}

/**
 * A rebuild's listing: names only. The index holds no fingerprints to compare with, and each read
 * takes its file's own. For a rebuild others look at while it runs, newest first: by the files'
 * modification times, stat'ed on the reader threads, or, when those say nothing, by each file's own
 * times (a read and a parse each, on the reader threads).
 */
function listRequestNames(ctx: TrackerContext, unreadable: UnreadableReport[]): Listed[] {
  const listed: Listed[] = [];
  for (const { name } of readRequestsDir(ctx)) listEntry(ctx, name, listed, unreadable, false);
  if (!ctx.rebuild?.newestFirst) return listed;
  const mode = mtimesSayNothing(ctx, listed) ? "times" : "stat";
  const times = new Map<string, number>();
  // One reader more than the read that follows: this thread has nothing to write meanwhile.
  readInParallel(
    mode,
    ctx.dir.requestsDir,
    listed.map((item) => item.id),
    ctx.options.rebuildThreads + 1,
    (results) => {
      for (const [id, timeMs] of results) times.set(id, timeMs);
    },
  );
  // Positions sorted by a typed array of the times: a third of the time of a sort that looks each time up.
  const order = Float64Array.from(listed, (item) => times.get(item.id)!);
  const positions = Uint32Array.from(listed.keys()).sort((a, b) => order[b]! - order[a]!);
  return Array.from(positions, (i) => ({ ...listed[i]!, mtimeMs: order[i]! }));
}

function listRequestFiles(ctx: TrackerContext, unreadable: UnreadableReport[]): Listed[] {
  const listed: Listed[] = [];
  for (const entry of readRequestsDir(ctx)) listEntry(ctx, entry.name, listed, unreadable);
  return listed;
}

/** Files stat'ed between two turns of the event loop by `reconcileInSteps`: a step short enough not to delay a request. */
const STAT_STEP = 1000;

/** True when the index already holds this file as it is on disk (same inode, size and mtime). */
export function indexedAsIs(ctx: TrackerContext, id: string): boolean {
  const file = ctx.dir.requestFile(id);
  const row = indexedFingerprint(ctx.db, id);
  if (!row) return false;
  try {
    return sameFingerprint(row, fingerprintOf(fs.lstatSync(file)));
  } catch {
    return false;
  }
}

/**
 * Write what was read of request files, under the writers' lock: upsert what parses (the file is
 * the truth, whatever its version), remove the rows of files that are gone, record unreadable
 * files with their reason (their last good row stays). `readOutsideLock`: the reads were made
 * before the lock was taken (a rebuild's reader threads), so an older version than the row's
 * never replaces it, and a file read as gone is looked for again before its row goes.
 */
function applyReads(ctx: TrackerContext, reads: Iterable<FileRead>, unreadable: UnreadableReport[], readOutsideLock: boolean): number {
  return withWritersLock(ctx, () => {
    let fixes = 0;
    for (const read of reads) {
      const key = requestFileKey(read.id);
      if (read.kind === "request") {
        const options = read.request && !ctx.rebuilding ? { text: true, feed: true, request: read.request } : ({ text: false, feed: false } as const);
        if (writeIndexRows(ctx.db, read.rows, { ...options, ordered: readOutsideLock })) fixes++;
      } else if (read.kind === "gone") {
        if (isIndexed(ctx.db, read.id) && !(readOutsideLock && fs.existsSync(ctx.dir.requestFile(read.id)))) {
          removeRequest(ctx.db, read.id);
          fixes++;
        } else {
          forgetUnreadable(ctx.db, key);
        }
      } else {
        recordUnreadable(ctx.db, key, read.reason, read.fingerprint, ctx.now());
        unreadable.push({ file: key, reason: read.reason });
      }
    }
    return fixes;
  });
}

/**
 * Read these request files into the index, in batches, each read under the writers' lock (see
 * applyReads). Used by reconciliation and by the watcher. Returns how many index rows changed.
 */
export function ingestRequests(ctx: TrackerContext, ids: readonly string[]): Ingested {
  const unreadable: UnreadableReport[] = [];
  let fixes = 0;
  for (let start = 0; start < ids.length; start += BATCH) {
    const batch = ids.slice(start, start + BATCH);
    fixes += applyReads(
      ctx,
      (function* () {
        for (const id of batch) yield readForIndex(ctx.dir.requestsDir, id, !ctx.rebuilding);
      })(),
      unreadable,
      false,
    );
  }
  return { fixes, unreadable, readerThreads: 0 };
}

/**
 * The catch-up of a command that answers from the rows an earlier rebuild left (`IndexedDownTo`): the
 * files modified since `sinceMs` (stat'ed on the reader threads) read into the index, and the rows of
 * files gone removed. Returns how many index rows changed.
 */
export function ingestChangedSince(ctx: TrackerContext, sinceMs: number): number {
  const listed: Listed[] = [];
  for (const { name } of readRequestsDir(ctx)) listEntry(ctx, name, listed, [], false);
  const ids = listed.map((item) => item.id);
  const changed: string[] = [];
  readInParallel("stat", ctx.dir.requestsDir, ids, ctx.options.rebuildThreads + 1, (results) => {
    for (const [id, mtimeMs] of results) if (mtimeMs >= sinceMs) changed.push(id);
  });
  const present = new Set(ids);
  const gone = indexedFingerprints(ctx.db)
    .map((row) => row.id)
    .filter((id) => !present.has(id));
  return ingestRequests(ctx, [...changed, ...gone]).fixes;
}

/**
 * A rebuild's ingest: every file is new to the index, so reader threads read, validate and turn
 * them into rows (lib/recovery/parallelReads.ts) while this thread writes them, BATCH at a time.
 */
function ingestAll(ctx: TrackerContext, items: readonly Listed[], listedAt: number): Ingested {
  const ids = items.map((item) => item.id);
  const unreadable: UnreadableReport[] = [];
  let fixes = 0;
  let pending: FileRead[] = [];
  let done = 0;
  const settled = ctx.rebuild?.settled;
  const newestFirst = ctx.rebuild?.newestFirst ?? false;
  // Newest first, the files not yet written are those from the first one not committed on: the newest of them bounds what is missing.
  const position = newestFirst ? new Map(ids.map((id, i) => [id, i])) : null;
  const committed = newestFirst ? new Uint8Array(ids.length) : null;
  let frontier = 0;
  let stopped = false;
  const flush = () => {
    if (newestFirst) {
      for (const read of pending) committed![position!.get(read.id)!] = 1;
      while (frontier < ids.length && committed![frontier]) frontier++;
    }
    const unindexed = frontier < ids.length ? (items[frontier]!.mtimeMs ?? Infinity) : -Infinity;
    withWritersLock(ctx, () => {
      fixes += applyReads(ctx, pending, unreadable, true);
      // Published with the rows: the next command's page may be settled by it without reading a file.
      if (newestFirst) lowerIndexedDownTo(ctx.db, { belowMs: unindexed, listedAt });
    });
    done += pending.length;
    if (settled) stopped = settled(unindexed);
    pending = [];
    ctx.rebuild?.onProgress(done, ids.length);
  };
  ctx.rebuild?.onProgress(0, ids.length);
  // Newest first, for a page waiting on them: the first batch read here, before the readers' threads start.
  const first = newestFirst ? BATCH : 0;
  if (first) {
    pending = readBatch("read", ctx.dir.requestsDir, ids.slice(0, first));
    flush();
  }
  const { threads } = stopped
    ? { threads: 0 }
    : readInParallel("read", ctx.dir.requestsDir, first ? ids.slice(first) : ids, ctx.options.rebuildThreads, (reads) => {
        for (const read of reads) pending.push(read);
        if (pending.length >= BATCH) flush();
        return !stopped;
      });
  if (pending.length && !stopped) flush();
  return { fixes, unreadable, readerThreads: threads, complete: !stopped };
}

/**
 * Bring the index in line with the files: stat everything, parse only what changed since the index
 * saw it, drop rows whose file is gone. An unreadable file is recorded with its reason, keeps its
 * last good row, and never stops the others.
 */
export function reconcile(ctx: TrackerContext): ReconcileReport {
  const unreadable: UnreadableReport[] = [];
  // The real clock, as the file system's: a file changed after the listing began has a later modification time.
  const listedAt = Date.now();
  if (ctx.rebuilding) return applyListing(ctx, listRequestNames(ctx, unreadable), unreadable, listedAt);
  return applyListing(ctx, listRequestFiles(ctx, unreadable), unreadable);
}

/**
 * `reconcile` for a process that serves requests meanwhile (the dashboard): the files are stat'ed
 * STAT_STEP at a time with the event loop free between steps (a big folder's stat in one go would
 * hold every request for a noticeable time). The listing may be a little stale by the end; every decision it leads to is re-checked on
 * the file (changed files are re-read, missing ones re-checked under the lock).
 */
export async function reconcileInSteps(ctx: TrackerContext, cancelled: () => boolean = () => false): Promise<ReconcileReport | null> {
  const unreadable: UnreadableReport[] = [];
  const listed: Listed[] = [];
  const entries = readRequestsDir(ctx);
  for (let start = 0; start < entries.length; start += STAT_STEP) {
    for (const entry of entries.slice(start, start + STAT_STEP)) listEntry(ctx, entry.name, listed, unreadable);
    await new Promise((resolve) => setImmediate(resolve));
    if (cancelled()) return null;
  }
  return applyListing(ctx, listed, unreadable);
}

/** What the index held when a listing was taken: each row's file fingerprint, and the files known unreadable. */
interface IndexSnapshot {
  indexed: Map<string, FileFingerprint>;
  knownBad: Map<string, FileFingerprint & { reason: string }>;
}

function snapshotIndex(ctx: TrackerContext): IndexSnapshot {
  return {
    indexed: new Map(indexedFingerprints(ctx.db).map((row) => [row.id, row])),
    knownBad: new Map(knownUnreadable(ctx.db).map((row) => [row.file, row])),
  };
}

function applyListing(ctx: TrackerContext, listed: Listed[], unreadable: UnreadableReport[], listedAt = Date.now()): ReconcileReport {
  const before = snapshotIndex(ctx);
  const changed: Listed[] = [];
  for (const item of listed) {
    const bad = before.knownBad.get(requestFileKey(item.id));
    if (bad && item.fingerprint && sameFingerprint(bad, item.fingerprint)) {
      unreadable.push({ file: requestFileKey(item.id), reason: bad.reason });
      continue;
    }
    const row = before.indexed.get(item.id);
    if (!row || !item.fingerprint || !sameFingerprint(row, item.fingerprint) || bad) changed.push(item);
  }
  const ingested = ctx.rebuilding
    ? ingestAll(ctx, changed, listedAt)
    : ingestRequests(
        ctx,
        changed.map((item) => item.id),
      );
  return finishListing(ctx, listed, before, unreadable, ingested, changed.length);
}

/** After the files were read: drop the rows whose file has gone, note badly named files, forget unreadable ones that left. */
function finishListing(
  ctx: TrackerContext,
  listed: Listed[],
  before: IndexSnapshot,
  unreadable: UnreadableReport[],
  ingested: Ingested,
  parsed: number,
): ReconcileReport {
  const { db } = ctx;
  const { indexed, knownBad } = before;
  let fixes = ingested.fixes;
  unreadable.push(...ingested.unreadable);

  const present = new Set(listed.map((item) => item.id));
  const missing = [...indexed.keys()].filter((id) => !present.has(id));
  if (missing.length) {
    fixes += withWritersLock(ctx, () => {
      let removed = 0;
      for (const id of missing) {
        // Re-check under the lock: a writer may have created the file after our listing.
        if (fs.existsSync(ctx.dir.requestFile(id))) continue;
        removeRequest(db, id);
        removed++;
      }
      return removed;
    });
  }
  const badNames = unreadable.filter((item) => !knownBad.has(item.file) && !present.has(item.file.slice("requests/".length, -".json".length)));
  if (knownBad.size || badNames.length) {
    withWritersLock(ctx, () => {
      // Files with names that cannot be request ids are listed too, so health shows them.
      for (const item of badNames) recordUnreadable(db, item.file, item.reason, null, ctx.now());
      // Unreadable files that have since gone are forgotten.
      for (const file of knownBad.keys()) {
        if (!fs.existsSync(path.join(ctx.dir.root, file))) forgetUnreadable(db, file);
      }
    });
  }

  unreadable.sort((a, b) => a.file.localeCompare(b.file));
  return { scanned: listed.length, parsed, fixes, unreadable, readerThreads: ingested.readerThreads, complete: ingested.complete ?? true };
}
