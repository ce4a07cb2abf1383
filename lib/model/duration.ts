import { ReqwatchError } from "./errors";

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/**
 * `250ms`, `30s`, `15m`, `1h`, `7d` or `2w`. Strict on purpose: a threshold that silently parsed
 * as something else (`5`, meant as minutes and taken as milliseconds) would hide requests or
 * delete them early.
 */
export function parseDuration(text: string, what = "duration"): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/.exec(text);
  if (!match) {
    const hint = /^\s*\d+(\.\d+)?\s*$/.test(text) ? " A number needs its unit." : "";
    throw new ReqwatchError("BAD_INPUT", `Invalid ${what}: ${JSON.stringify(text)}.${hint} Use a number with a unit: 250ms, 30s, 15m, 1h, 7d or 2w.`);
  }
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

/**
 * A duration setting from the environment (`REQWATCH_RETENTION=1h`), or `fallback` when it is not
 * set. 0 is refused: no interval, threshold or retention at all (a monitor pass in a busy loop,
 * every finished request removed) is never what a setting means.
 */
export function durationVariable(env: NodeJS.ProcessEnv, variable: string, fallback: number): number {
  const given = env[variable];
  if (!given) return fallback;
  const ms = parseDuration(given, variable);
  if (ms <= 0) throw new ReqwatchError("BAD_INPUT", `Invalid ${variable}: ${JSON.stringify(given)}. It must be longer than 0.`);
  return ms;
}

/** `1h`, `1h 30m`, `45s`, `250ms`: the largest two units. */
export function formatDuration(ms: number): string {
  // A time read a moment before another program's write (a wait since a resume) is 0, not -27ms.
  if (ms < 1000) return `${Math.round(Math.max(0, ms))}ms`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.slice(0, 2).join(" ");
}

/**
 * `5m 12s ago`, or `in 3m` for a time ahead (a deadline, a back-off). Less than a second ahead reads
 * as `0ms ago`: a time written a moment before another process read its clock.
 */
export function formatAgo(then: number, now: number): string {
  return then - now >= 1000 ? `in ${formatDuration(then - now)}` : `${formatDuration(Math.max(0, now - then))} ago`;
}
