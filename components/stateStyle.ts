import type { CSSProperties } from "react";
import type { State } from "@/lib/model/states";

/** Each state's colour comes from the CSS variable of the same name. */
export function stateColor(state: State): CSSProperties {
  return { ["--state-color" as string]: `var(--${state})` };
}
