import type { StuckSnapshot } from "../feed/feedHub";
import type { StateCounts } from "../index/queries/countByState";

/**
 * The body of GET /api/status (lib/server/readApi.ts): the counts per state and the stuck
 * monitor's latest pass, which the browser fetches when it polls instead of following the event stream.
 */
export interface StatusBody {
  counts: StateCounts;
  stuck: StuckSnapshot;
}
