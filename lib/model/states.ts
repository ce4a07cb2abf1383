/** Every lifecycle state, in lifecycle order. The `State` type and all checks derive from this list. */
export const STATES = ["created", "queued", "processing", "completed", "failed", "timeout"] as const;
export type State = (typeof STATES)[number];

export const TERMINAL_STATES = ["completed", "failed", "timeout"] as const satisfies readonly State[];
export type TerminalState = (typeof TERMINAL_STATES)[number];

/**
 * The one transition table. The tracker refuses anything not listed here; the dashboard derives
 * its buttons from it; the tests enumerate it.
 */
export const TRANSITIONS: Readonly<Record<State, readonly State[]>> = {
  // To failed before it ran: a cancel (lib/queue/cancel.ts), or a writer giving up on it.
  created: ["queued", "processing", "failed"],
  queued: ["processing", "failed"],
  processing: ["completed", "failed", "timeout", "queued"],
  completed: [],
  failed: ["queued"],
  timeout: ["queued"],
};

export function isState(value: unknown): value is State {
  return typeof value === "string" && (STATES as readonly string[]).includes(value);
}

export function isTerminal(state: State): state is TerminalState {
  return (TERMINAL_STATES as readonly State[]).includes(state);
}

export function canTransition(from: State, to: State): boolean {
  return TRANSITIONS[from].includes(to);
}
