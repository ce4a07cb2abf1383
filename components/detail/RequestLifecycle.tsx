"use client";

import { formatDuration } from "@/lib/model/duration";
import { lifecycleSegments, timeInStates } from "@/lib/views/lifecycle";
import { useNow } from "../data/useNow";
import { stateColor } from "../stateStyle";
import { useRequestDetail } from "./RequestDetailQuery";

/**
 * The lifecycle bar and the time in each state: the one part of a request's page that owns the
 * ticking clock, so a tick re-renders these and not the page's long texts.
 */
export function RequestLifecycle() {
  const { request } = useRequestDetail().data;
  const now = useNow(1000);
  const segments = lifecycleSegments(request, now);
  const total = segments.reduce((sum, s) => sum + s.ms, 0) || 1;
  const totals = timeInStates(segments);
  return (
    <>
      <div className="lifecycle" role="img" aria-label={`Lifecycle: ${segments.map((s) => `${s.state} ${formatDuration(s.ms)}`).join(", ")}`}>
        {segments.map((segment, i) => (
          <span key={i} style={{ ...stateColor(segment.state), flexGrow: segment.ms / total }} title={`${segment.state}: ${formatDuration(segment.ms)}`} />
        ))}
      </div>
      <ul className="legend" aria-label="Time in each state">
        {Object.entries(totals).map(([state, ms]) => (
          <li key={state} style={stateColor(state as never)} suppressHydrationWarning>
            <i />
            {state} {formatDuration(ms)}
          </li>
        ))}
      </ul>
    </>
  );
}
