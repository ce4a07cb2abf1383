import type { BackoffOptions } from "../types";

/** Delay before retry number `attempt` (1-based): exponential, capped, less up to `jitter` of it at random. */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number): number {
  const full = Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(full * (1 - options.jitter * random()));
}
