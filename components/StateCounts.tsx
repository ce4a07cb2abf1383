import type { StateCounts as Counts } from "@/lib/db/queries/countByState";
import { STATES } from "@/lib/model/states";
import { stateColor } from "./stateStyle";

export function StateCounts({ counts }: { counts: Counts }) {
  return (
    <ul className="counts" aria-label="Requests by state">
      {STATES.map((state) => (
        <li key={state} style={stateColor(state)} aria-label={`${state}: ${counts[state]}`}>
          <span className="n">{counts[state]}</span>
          <span className="label">{state}</span>
        </li>
      ))}
    </ul>
  );
}
