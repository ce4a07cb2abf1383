"use client";

import { formatDuration } from "@/lib/model/duration";
import { isTerminal } from "@/lib/model/states";
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
  const last = segments.at(-1)!;
  const final = isTerminal(last.state) ? last.state : null;
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
            {/* The final state has no time spent in it, only a moment: when it was reached. */}
            {state} {state === final && ms === 0 ? `${formatDuration(Math.max(0, now - last.from))} ago` : formatDuration(ms)}
          </li>
        ))}
      </ul>
    </>
  );
}
