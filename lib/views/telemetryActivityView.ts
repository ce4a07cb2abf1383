import type { ActivityRange, WorkspaceMatch } from "../model/activity";
import { telemetryActivityRows } from "../telemetry/store/queries/activity";
import { readTelemetryStore } from "../telemetry/store/readStore";
import { buildActivity, type ActivityView } from "./activityView";

/**
 * The same charts of the lifecycles the OpenTelemetry receiver kept in `file` (read-only), with
 * their cost and tokens; a store not made yet (nothing received) draws empty charts. Apart from
 * activityView.ts, which the browser imports too: this one opens SQLite.
 */
export function telemetryActivityView(file: string, range: ActivityRange, match: WorkspaceMatch, now: number): ActivityView {
  return buildActivity(range, now, "otel", (window) =>
    readTelemetryStore(file, { rows: [], live: { created: 0, queued: 0, processing: 0 } }, (db) => telemetryActivityRows(db, { ...window, match })),
  );
}
