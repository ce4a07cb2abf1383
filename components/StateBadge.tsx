import type { State } from "@/lib/model/states";
import { stateColor } from "./stateStyle";

export function StateBadge({ state }: { state: State }) {
  return (
    <span className="state" style={stateColor(state)}>
      {state}
    </span>
  );
}
