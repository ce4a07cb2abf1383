import { InvalidArgumentError } from "commander";
import { parseDuration } from "../duration";
import { isReqwatchError } from "../errors";
import { STATES, isState, type State } from "../states";

/** Option-value parsers: a bad value is a usage error (exit 2), reported by commander with the option's name. */
export function integer(value: string): number {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError("Expected a whole number.");
  return Number(value);
}

export function boolean(value: string): boolean {
  if (value === "true" || value === "1" || value === "yes") return true;
  if (value === "false" || value === "0" || value === "no") return false;
  throw new InvalidArgumentError("Expected true or false.");
}

export function duration(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError(isReqwatchError(error) ? error.message : String(error));
  }
}

/** Epoch milliseconds, an ISO date, or `+15m` (from now). */
export function timestamp(now: () => number) {
  return (value: string): number => {
    if (/^\d+$/.test(value)) return Number(value);
    if (value.startsWith("+")) return now() + duration(value.slice(1));
    const parsed = Date.parse(value);
    if (Number.isNaN(parsed)) throw new InvalidArgumentError("Expected epoch milliseconds, an ISO date, or +DURATION.");
    return parsed;
  };
}

/** A point in the past: a duration ago (`1h`), an ISO date, or epoch milliseconds. */
export function since(now: () => number) {
  return (value: string): number => {
    if (/^\d+(\.\d+)?(ms|s|m|h|d|w)$/.test(value)) return now() - duration(value);
    return timestamp(now)(value);
  };
}

export function states(value: string, previous: State[] = []): State[] {
  const parts = value.split(",").map((part) => part.trim()).filter(Boolean);
  for (const part of parts) {
    if (!isState(part)) throw new InvalidArgumentError(`Unknown state "${part}"; expected one of ${STATES.join(", ")}.`);
  }
  return [...previous, ...(parts as State[])];
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--set key=JSON` (a bare word that is not JSON is taken as a string). */
export function assignment(value: string, previous: Record<string, unknown> = {}): Record<string, unknown> {
  const at = value.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError("Expected key=value.");
  const key = value.slice(0, at);
  const raw = value.slice(at + 1);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = raw;
  }
  return { ...previous, [key]: parsed };
}
