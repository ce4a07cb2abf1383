import fs from "node:fs";
import path from "node:path";
import { defaultCacheDir } from "../fs/cacheDir";
import { discardSpares, OWN_TEMP_PATTERN, writeFileDurable } from "../fs/durableWrite";
import { isReqwatchError, ReqwatchError } from "../model/errors";
import type { RequestRecord } from "../model/requestFormat";
import { readRequestFile, serializeRequest } from "../stateFiles/requestFile";
import { ensureStateDir, stateDirAt, type StateDir } from "../stateFiles/stateDir";
import { openStateDir } from "../store/ownership";
import type { CopiedBatch } from "./copyBatch";
import { shownUrl } from "./pgDriver";
import { openSharedStore } from "./sharedTracker";

/** What a copy did, batch by batch added up. */
export interface CopyReport {
  from: string;
  to: string;
  /** Requests the source holds (readable or not). */
  found: number;
  copied: number;
  /** At the destination already at the same version: a copy run again after it was stopped. */
  alreadyThere: number;
  /** At the destination at another version: left as they are. */
  conflicts: { requestId: string; reason: string }[];
  /** Source files that could not be read: not copied, and the source left as it is. */
  unreadable: { requestId: string; reason: string }[];
  batches: number;
}

export interface CopyOptions {
  /** Requests per batch: each batch is one transaction in the shared store. Default 100. */
  batchSize?: number;
  /** After each batch is committed: a progress line. */
  onBatch?: (report: CopyReport) => void;
}

const DEFAULT_BATCH = 100;

/**
 * Copy every request, with its history, from a state folder into the shared store at `url`, in
 * batches, each one transaction. What is there already at the same version is skipped, so a copy
 * stopped half way (killed) is run again to finish. The folder is only read.
 */
export async function copyFolderToStore(folder: string, url: string, options: CopyOptions = {}): Promise<CopyReport> {
  const dir = sourceFolder(folder);
  const ids = requestIdsIn(dir);
  const report = aReport(dir.root, shownUrl(url), ids.length);
  const store = await openSharedStore(url);
  try {
    for (let at = 0; at < ids.length; at += batchSizeOf(options)) {
      const records: RequestRecord[] = [];
      for (const requestId of ids.slice(at, at + batchSizeOf(options))) {
        const read = readSource(dir, requestId, report);
        if (read) records.push(read);
      }
      add(report, await store.copyBatch(records));
      options.onBatch?.(report);
    }
  } finally {
    await store.close();
  }
  return report;
}

/**
 * Copy every request, with its history, from the shared store at `url` into a state folder (new,
 * empty, or one reqwatch manages), in batches in id order. A request file already there at the same
 * version is skipped; each file is written whole or not at all. The store is opened read-only.
 */
export async function copyStoreToFolder(url: string, folder: string, options: CopyOptions = {}): Promise<CopyReport> {
  const store = await openSharedStore(url, {}, "read");
  try {
    const dir = destinationFolder(folder);
    const report = aReport(shownUrl(url), dir.root, 0);
    try {
      for (let after = ""; ;) {
        const records = await store.requestsAfter(after, batchSizeOf(options));
        if (!records.length) break;
        report.found += records.length;
        add(report, writeBatch(dir, records));
        options.onBatch?.(report);
        after = records.at(-1)!.requestId;
      }
    } finally {
      discardSpares();
    }
    return report;
  } finally {
    await store.close();
  }
}

function batchSizeOf(options: CopyOptions): number {
  const size = options.batchSize ?? DEFAULT_BATCH;
  if (!Number.isInteger(size) || size < 1) throw new ReqwatchError("BAD_INPUT", "A copy's batch size must be a whole number of at least 1.");
  return size;
}

function aReport(from: string, to: string, found: number): CopyReport {
  return { from, to, found, copied: 0, alreadyThere: 0, conflicts: [], unreadable: [], batches: 0 };
}

function add(report: CopyReport, batch: CopiedBatch): void {
  report.copied += batch.copied.length;
  report.alreadyThere += batch.alreadyThere.length;
  report.conflicts.push(...batch.conflicts);
  report.batches++;
}

/** The source folder as it is: never made, marked or indexed here. */
function sourceFolder(folder: string): StateDir {
  const dir = stateDirAt(folder);
  if (!fs.existsSync(dir.requestsDir)) {
    throw new ReqwatchError("NOT_FOUND", `${dir.root} holds no requests/ folder: not a reqwatch state folder.`, { stateDir: dir.root });
  }
  return dir;
}

/** The request ids of the folder's files, in id order (a copy's batches are the same each run); temp files left by a writer are not requests. */
function requestIdsIn(dir: StateDir): string[] {
  return fs
    .readdirSync(dir.requestsDir)
    .filter((name) => name.endsWith(".json") && !name.startsWith(".") && !OWN_TEMP_PATTERN.test(name))
    .map((name) => name.slice(0, -".json".length))
    .sort();
}

function readSource(dir: StateDir, requestId: string, report: CopyReport): RequestRecord | null {
  try {
    const read = readRequestFile(path.join(dir.requestsDir, `${requestId}.json`), requestId);
    if (!read) report.unreadable.push({ requestId, reason: "removed while the copy ran" });
    return read?.request ?? null;
  } catch (error) {
    if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
    report.unreadable.push({ requestId, reason: String(error.details?.reason ?? error.message) });
    return null;
  }
}

/** The destination: made if missing, and only a folder reqwatch manages (its marker written in a new or empty one). */
function destinationFolder(folder: string): StateDir {
  const { dir, ownership } = openStateDir(folder, { create: true, readOnly: false, cacheDir: defaultCacheDir(), now: Date.now });
  if (ownership.access !== "managed") {
    throw new ReqwatchError("BAD_INPUT", `${dir.root}: ${ownership.reason}. Copy into a new or empty folder, or one reqwatch manages.`, { stateDir: dir.root });
  }
  ensureStateDir(dir);
  return dir;
}

function writeBatch(dir: StateDir, records: readonly RequestRecord[]): CopiedBatch {
  const done: CopiedBatch = { copied: [], alreadyThere: [], conflicts: [] };
  for (const record of records) {
    const file = dir.requestFile(record.requestId);
    let there: RequestRecord | null;
    try {
      there = readRequestFile(file, record.requestId)?.request ?? null;
    } catch (error) {
      if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
      done.conflicts.push({
        requestId: record.requestId,
        reason: `its file there cannot be read (${String(error.details?.reason ?? error.message)}): left as it is`,
      });
      continue;
    }
    if (!there) {
      writeFileDurable(file, serializeRequest(record));
      done.copied.push(record.requestId);
    } else if ((there.version ?? 0) === (record.version ?? 0)) done.alreadyThere.push(record.requestId);
    else
      done.conflicts.push({
        requestId: record.requestId,
        reason: `the folder holds version ${there.version ?? 0}, the store version ${record.version ?? 0}: left as it is`,
      });
  }
  return done;
}
