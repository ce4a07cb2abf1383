import { ReqwatchError } from "./errors";
import { parseDuration } from "./duration";
import { resolveStateDirPath } from "./stateDir";

export const DEFAULT_HUNG_AFTER_MS = 60 * 60 * 1000;
export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface TrackerOptions {
  /** The state directory. Default: `REQWATCH_STATE_DIR`, else `./.reqwatch`. */
  stateDir?: string;
  /** A request `processing` for longer than this is timed out by recovery. Default 1 hour (`REQWATCH_HUNG_AFTER`). */
  hungAfterMs?: number;
  /** Terminal requests older than this are cleaned up. Default 24 hours (`REQWATCH_RETENTION`). */
  retentionMs?: number;
  /** Run recovery when opening. Default true. (An index that must be rebuilt is rebuilt regardless.) */
  recover?: boolean;
  /** The clock, for tests. */
  now?: () => number;
}

export interface ResolvedTrackerOptions {
  stateDir: string;
  hungAfterMs: number;
  retentionMs: number;
  recover: boolean;
  now: () => number;
}

const KNOWN = ["stateDir", "hungAfterMs", "retentionMs", "recover", "now"] as const;

function suggestion(key: string): string {
  const lower = key.toLowerCase();
  const close = KNOWN.find((known) => known.toLowerCase() === lower || distance(known.toLowerCase(), lower) <= 2);
  return close ? ` should be "${close}"` : ` (known options: ${KNOWN.join(", ")})`;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const kept = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = kept;
    }
  }
  return row[b.length]!;
}

function positiveMs(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new ReqwatchError("BAD_INPUT", `Option "${name}" must be a positive number of milliseconds.`);
  }
  return value;
}

/** Check options up front with exact messages, then fill in defaults from the environment. */
export function resolveTrackerOptions(options: TrackerOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedTrackerOptions {
  for (const key of Object.keys(options)) {
    if (!(KNOWN as readonly string[]).includes(key)) {
      throw new ReqwatchError("BAD_INPUT", `Unknown option "${key}"${suggestion(key)}.`);
    }
  }
  if (options.stateDir !== undefined && (typeof options.stateDir !== "string" || options.stateDir === "")) {
    throw new ReqwatchError("BAD_INPUT", `Option "stateDir" must be a non-empty path.`);
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw new ReqwatchError("BAD_INPUT", `Option "now" must be a function returning epoch milliseconds.`);
  }
  return {
    stateDir: resolveStateDirPath(options.stateDir, env),
    hungAfterMs: durationSetting(options.hungAfterMs, "hungAfterMs", env, "REQWATCH_HUNG_AFTER", DEFAULT_HUNG_AFTER_MS),
    retentionMs: durationSetting(options.retentionMs, "retentionMs", env, "REQWATCH_RETENTION", DEFAULT_RETENTION_MS),
    recover: options.recover ?? true,
    now: options.now ?? Date.now,
  };
}

/** The option if given, else the environment variable (a duration such as `1h`), else the default. */
function durationSetting(value: unknown, name: string, env: NodeJS.ProcessEnv, variable: string, fallback: number): number {
  if (value !== undefined) return positiveMs(value, name);
  const fromEnv = env[variable];
  return fromEnv ? parseDuration(fromEnv, variable) : fallback;
}
