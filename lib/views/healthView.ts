import fs from "node:fs";
import type { UnreadableFile } from "../db/unreadableFiles";
import type { IndexGuardStatus } from "../recovery/indexGuard";
import type { IngestStatus } from "../ingest/folderIngest";
import type { MonitorHandle } from "../types";
import { STATES } from "../model/states";
import type { Reader } from "../roles/reader";
import type { RetentionStatus } from "../actions/retention";

export interface HealthView {
  stateDir: string;
  /** Whether reqwatch manages the folder or only observes it, and why. */
  access: "managed" | "observed";
  accessReason: string;
  generation: string;
  requests: number;
  /** index.db with its write-ahead log. */
  indexBytes: number;
  /** The request files, as indexed. */
  requestFileBytes: number;
  /** archive.db with its write-ahead log (cleaned-up requests and the audit log); 0 when there is none yet. */
  archiveBytes: number;
  retention: RetentionStatus;
  unreadable: UnreadableFile[];
  ingest: IngestStatus;
  /** A gateway's response files in the index: how many, how many cannot be read, how many with a failed callback. */
  responses: { files: number; unreadable: number; callbackFailed: number };
  /** A missing state directory (now), and the index rebuilds made while the server ran. */
  guard: IndexGuardStatus;
  monitor: { intervalMs: number; lastPassAt: number | null; durationMs: number | null; stuck: number | null; lastError: string | null };
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** What the health page and /api/health show. */
export function healthView(reader: Reader, ingest: IngestStatus, monitor: MonitorHandle, guard: IndexGuardStatus): HealthView {
  const counts = reader.countsByState();
  const pass = monitor.lastPass();
  const index = reader.stateDir.indexFile;
  return {
    stateDir: reader.stateDir.root,
    access: reader.ownership.access,
    accessReason: reader.ownership.reason,
    generation: reader.generation(),
    requests: STATES.reduce((sum, state) => sum + counts[state], 0),
    indexBytes: sizeOf(index) + sizeOf(`${index}-wal`),
    requestFileBytes: reader.requestFileBytes(),
    archiveBytes: sizeOf(reader.stateDir.archiveFile) + sizeOf(`${reader.stateDir.archiveFile}-wal`),
    retention: reader.retention(),
    unreadable: reader.unreadableFiles(),
    ingest,
    responses: reader.responseCounts(),
    guard,
    monitor: {
      intervalMs: reader.options.monitorIntervalMs,
      lastPassAt: pass?.at ?? null,
      durationMs: pass?.durationMs ?? null,
      stuck: pass?.stuck.length ?? null,
      lastError: monitor.lastError()?.message ?? null,
    },
  };
}
