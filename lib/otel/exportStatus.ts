import type { ProcessIdentity } from "../process/liveness";

// The export's status on its own, without the OpenTelemetry packages: the dashboard server shows
// it (lib/dashboard/otelChild.ts) and does not load the exporter.

/** Where the exporter stands in the change feed: the feed's generation (a rebuilt index has another) and the last change exported. */
export interface ExportPosition {
  generation: string;
  seq: number;
}

export interface OtelExportStatus {
  /** Spans sent and acknowledged since the start. */
  exported: number;
  position: ExportPosition | null;
  /** How far behind the feed the export is: the age of the oldest change not yet exported (0 when caught up). */
  lagMs: number;
  lastError: { message: string; at: number } | null;
  /** When a step last went through (its spans acknowledged, or nothing to send): after lastError.at, the export has recovered. */
  lastSuccessAt: number | null;
  /** Whole re-exports from the files (the first run, a rebuilt index, a feed trimmed past the position). */
  reexports: number;
  /** Another exporter (a `reqwatch otel`, or a dashboard with --otel) exports this folder: this one waits to take over when it stops. */
  waitingFor: ProcessIdentity | null;
}

/** The status before the first step. */
export const NO_EXPORT_YET: Readonly<OtelExportStatus> = {
  exported: 0,
  position: null,
  lagMs: 0,
  lastError: null,
  lastSuccessAt: null,
  reexports: 0,
  waitingFor: null,
};
