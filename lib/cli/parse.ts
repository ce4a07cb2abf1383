import { InvalidArgumentError } from "commander";
import { parseDuration } from "../model/duration";
import { isReqwatchError } from "../model/errors";
import { parseFlag } from "../model/flag";
import { STATES, isState, type State } from "../model/states";
import { parseSourceSpec, type SourceSpec } from "../sources/sourceSpec";

/** Option-value parsers: a bad value is a usage error (exit 2), reported by commander with the option's name. */
export function integer(value: string): number {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`"${value}" is not a whole number.`);
  return Number(value);
}

/** A whole number of `min` or more: the request's own bounds (tokens, attempts), checked as the option is read. */
export function integerFrom(min: number) {
  return (value: string): number => {
    const n = integer(value);
    if (n < min) throw new InvalidArgumentError(`${n} is too small: use ${min} or more.`);
    return n;
  };
}

/** A whole number from `min` to `max`. */
export function integerBetween(min: number, max: number) {
  return (value: string): number => {
    const n = integer(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${n} is out of range: use ${min} to ${max}.`);
    return n;
  };
}

export function boolean(value: string): boolean {
  try {
    return parseFlag(value, "value");
  } catch (error) {
    throw new InvalidArgumentError(isReqwatchError(error) ? error.message : String(error));
  }
}

export function duration(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError(isReqwatchError(error) ? error.message : String(error));
  }
}

/** A duration longer than 0: an interval or a threshold. */
export function positiveDuration(value: string): number {
  const ms = duration(value);
  if (ms <= 0) throw new InvalidArgumentError("It must be longer than 0.");
  return ms;
}

/**
 * Epoch milliseconds or an ISO date; null when it is neither. Epoch milliseconds have 12 digits or
 * more (since 1973): a short number is a duration without its unit (`5` for `5m`), refused as one.
 */
function pointInTime(value: string): number | null {
  if (/^\d+$/.test(value)) return value.length >= 12 ? Number(value) : null;
  // Date.parse takes "5" or "June" as dates; only what looks like an ISO date counts.
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed;
}

/** For a short number: that it lacks a unit. */
function unitless(value: string): string {
  return /^\d+(\.\d+)?$/.test(value) ? " (a duration needs its unit, such as 5m; epoch milliseconds have 13 digits)" : "";
}

/** A point in the future: `+15m` (from now), an ISO date, or epoch milliseconds. */
export function timestamp(now: () => number) {
  return (value: string): number => {
    if (value.startsWith("+")) return now() + duration(value.slice(1));
    const at = pointInTime(value);
    if (at === null)
      throw new InvalidArgumentError(
        `"${value}" is not a time${unitless(value)}. Use +15m (from now), an ISO date such as 2026-11-23T10:00:00Z, or epoch milliseconds.`,
      );
    return at;
  };
}

/** A point in the past: a duration ago (`1h`), an ISO date, or epoch milliseconds. */
export function since(now: () => number) {
  return (value: string): number => {
    if (/^\d+(\.\d+)?(ms|s|m|h|d|w)$/.test(value)) return now() - duration(value);
    const at = pointInTime(value);
    if (at === null)
      throw new InvalidArgumentError(
        `"${value}" is not a time${unitless(value)}. Use a duration ago such as 1h or 7d, an ISO date such as 2026-11-23T10:00:00Z, or epoch milliseconds.`,
      );
    return at;
  };
}

export function states(value: string, previous: State[] = []): State[] {
  const parts = value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  for (const part of parts) {
    if (!isState(part)) throw new InvalidArgumentError(`Unknown state "${part}"; expected one of ${STATES.join(", ")}.`);
  }
  return [...previous, ...(parts as State[])];
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--set key=JSON`. The value must be JSON: a typo in an object must not be stored as a string. */
export function assignment(value: string, previous: Record<string, unknown> = {}): Record<string, unknown> {
  const at = value.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError(`"${value}" is not key=JSON. Use, for example, retries=3, urgent=true or note='"text"'.`);
  const key = value.slice(0, at);
  const raw = value.slice(at + 1);
  try {
    return { ...previous, [key]: JSON.parse(raw) };
  } catch {
    throw new InvalidArgumentError(
      `The value of ${key} is not JSON: ${raw}. Use, for example, ${key}=3, ${key}=true, ${key}={"a":1} or ${key}='"text"' (a string in double quotes).`,
    );
  }
}

/** A source to read: one `source` takes, or `otel`, what the dashboard's receiver kept for the state folder (resolved with it: `sourceFor`). */
export function readableSource(value: string): SourceSpec | "otel" {
  return value === "otel" ? "otel" : source(value);
}

/** Another program's queue: claude-mem, claude-mem:<path> or sqlite:<mapping.json> (a relative path from here). */
export function source(value: string): SourceSpec {
  try {
    return parseSourceSpec(value);
  } catch (error) {
    throw new InvalidArgumentError(isReqwatchError(error) ? error.message : String(error));
  }
}
