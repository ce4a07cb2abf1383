import fs from "node:fs";
import path from "node:path";
import { isReqwatchError } from "../model/errors";
import type { RequestRecord } from "../model/requestFormat";
import { fingerprintOf, type FileFingerprint } from "../fs/fingerprint";
import { readRequestFile } from "../stateFiles/requestFile";
import { indexRowsOf, type IndexRows } from "../db/upsertRequest";

/** What one request file holds for the index: its rows (and the request, when the caller writes the feed), nothing (gone), or why it cannot be read. */
export type FileRead =
  | { id: string; kind: "request"; rows: IndexRows; request?: RequestRecord }
  | { id: string; kind: "gone" }
  | { id: string; kind: "unreadable"; reason: string; fingerprint: FileFingerprint | null };

/**
 * Read and validate one request file and compute its index rows. Pure of the index, so a rebuild
 * runs it in worker threads (lib/recovery/rebuildWorker.ts) while one thread writes. `keepRequest`:
 * carry the parsed request too (for the feed and the text index; a rebuild writes neither).
 */
export function readForIndex(requestsDir: string, id: string, keepRequest: boolean): FileRead {
  const file = path.join(requestsDir, `${id}.json`);
  try {
    const read = readRequestFile(file, id);
    if (!read) return { id, kind: "gone" };
    return { id, kind: "request", rows: indexRowsOf(read.request, read.fingerprint), ...(keepRequest && { request: read.request }) };
  } catch (error) {
    if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
    let fingerprint: FileFingerprint | null = null;
    try {
      fingerprint = fingerprintOf(fs.lstatSync(file));
    } catch {
      // Gone meanwhile; the next look sees it missing.
    }
    return { id, kind: "unreadable", reason: String(error.details?.reason ?? error.message), fingerprint };
  }
}

/**
 * What a rebuild's reader hands over for a batch of files: "read", each one's `readForIndex` (without
 * the request); "stat", each one's modification time; "times", the later of its own `createdAt` and
 * `lastUpdatedAt` (Infinity when it does not parse: read early, it is then recorded as unreadable). -1: gone.
 */
export type ReadMode = "read" | "stat" | "times";
export type BatchResult<M extends ReadMode> = M extends "read" ? FileRead : [id: string, timeMs: number];

/** A request file's own latest time, for ordering a rebuild by what the files say rather than by their modification times. */
function latestTime(file: string): number {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return -1;
  }
  try {
    const { createdAt, lastUpdatedAt } = JSON.parse(text) as { createdAt?: unknown; lastUpdatedAt?: unknown };
    const times = [createdAt, lastUpdatedAt].filter((time): time is number => typeof time === "number" && Number.isFinite(time));
    return times.length ? Math.max(...times) : Infinity;
  } catch {
    return Infinity;
  }
}

/** One batch of a rebuild's reads, on a reader thread or, when there is none, on the writing one. */
export function readBatch<M extends ReadMode>(mode: M, requestsDir: string, batch: readonly string[]): BatchResult<M>[] {
  if (mode === "read") return batch.map((id) => readForIndex(requestsDir, id, false)) as BatchResult<M>[];
  if (mode === "times") return batch.map((id): [string, number] => [id, latestTime(path.join(requestsDir, `${id}.json`))]) as BatchResult<M>[];
  return batch.map((id): [string, number] => {
    try {
      return [id, fs.lstatSync(path.join(requestsDir, `${id}.json`)).mtimeMs];
    } catch {
      return [id, -1];
    }
  }) as BatchResult<M>[];
}
