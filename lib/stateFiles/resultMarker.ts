import path from "node:path";
import { z } from "zod";
import { retireFile, writeFileDurable } from "../fs/durableWrite";
import { smallJsonValue } from "../fs/readSmallJson";
import { assertRequestId } from "../model/ids";
import { requestFieldsSchema } from "../model/requestFormat";
import { lazily } from "../model/lazily";
import { MAX_REQUEST_FILE_BYTES } from "./requestFile";
import type { StateDir } from "./stateDir";

/**
 * `results/<id>.json`: what a worker finished with, written before it reports. If the
 * worker dies between finishing and reporting, the monitor applies the marker instead of running
 * the request again.
 */
const resultMarkerSchema = lazily(() =>
  z.looseObject({
    requestId: z.string(),
    token: z.string(),
    outcome: z.enum(["completed", "failed"]),
    fields: requestFieldsSchema().optional(),
    error: z.string().optional(),
    retryable: z.boolean().optional(),
    writtenAt: z.number(),
  }),
);
type ResultMarker = z.infer<ReturnType<typeof resultMarkerSchema>>;

function markerPath(dir: StateDir, requestId: string): string {
  assertRequestId(requestId);
  return path.join(dir.resultsDir, `${requestId}.json`);
}

/**
 * Atomic, not fsynced: the marker must survive the worker process dying, which the page cache
 * guarantees. A marker lost to a power cut costs a re-run of the request (the machine's workers
 * died too), never data, and the request file itself is always written durably.
 */
export function writeResultMarker(dir: StateDir, marker: ResultMarker): void {
  writeFileDurable(markerPath(dir, marker.requestId), `${JSON.stringify(marker)}\n`, { fsync: false });
}

/** The marker for a request, or null when there is none or it cannot be read (a torn marker is no result). */
export function readResultMarker(dir: StateDir, requestId: string): ResultMarker | null {
  // A result's fields are a request's: the same bound.
  return smallJsonValue(markerPath(dir, requestId), {
    maxBytes: MAX_REQUEST_FILE_BYTES,
    links: "refuse",
    shape: (json) => {
      const parsed = resultMarkerSchema().safeParse(json);
      return parsed.success && parsed.data.requestId === requestId ? parsed.data : undefined;
    },
  });
}

/**
 * Not fsynced: a marker that survives a crash names a claim that is no longer current, and is
 * ignored. The file is kept as this process's spare for its next marker when it can be.
 */
export function removeResultMarker(dir: StateDir, requestId: string): void {
  retireFile(markerPath(dir, requestId));
}
