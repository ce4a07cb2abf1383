import fs from "node:fs";
import type { UnreadableFile } from "../db/unreadableFiles";
import type { IndexGuardStatus } from "../recovery/indexGuard";
import type { IngestStatus } from "../ingest/startIngest";
import type { MonitorHandle } from "../types";
import { STATES } from "../model/states";
import type { TrackerService } from "../tracker";
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
export function healthView(tracker: TrackerService, ingest: IngestStatus, monitor: MonitorHandle, guard: IndexGuardStatus): HealthView {
  const counts = tracker.countsByState();
  const pass = monitor.lastPass();
  const index = tracker.stateDir.indexFile;
  return {
    stateDir: tracker.stateDir.root,
    access: tracker.ownership.access,
    accessReason: tracker.ownership.reason,
    generation: tracker.generation(),
    requests: STATES.reduce((sum, state) => sum + counts[state], 0),
    indexBytes: sizeOf(index) + sizeOf(`${index}-wal`),
    requestFileBytes: tracker.requestFileBytes(),
    archiveBytes: sizeOf(tracker.stateDir.archiveFile) + sizeOf(`${tracker.stateDir.archiveFile}-wal`),
    retention: tracker.retention(),
    unreadable: tracker.unreadableFiles(),
    ingest,
    responses: tracker.responseCounts(),
    guard,
    monitor: {
      intervalMs: tracker.options.monitorIntervalMs,
      lastPassAt: pass?.at ?? null,
      durationMs: pass?.durationMs ?? null,
      stuck: pass?.stuck.length ?? null,
      lastError: monitor.lastError()?.message ?? null,
    },
  };
}
