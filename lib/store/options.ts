import os from "node:os";
import path from "node:path";
import { defaultCacheDir } from "../fs/cacheDir";
import { ReqwatchError } from "../model/errors";
import { durationVariable } from "../model/duration";
import { flagSetting } from "../model/flag";
import { resolveStateDirPath } from "../stateFiles/stateDir";
import { compileExtraPattern, REDACT_FIELDS, type Redaction, type RedactField } from "../model/redaction";
import type { TrackerOptions, BackoffOptions, ResolvedTrackerOptions } from "../types";

export const DEFAULT_PROCESSING_STUCK_AFTER_MS = 60 * 60 * 1000;
export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_ARCHIVE_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_QUEUED_STUCK_AFTER_MS = 10 * 60 * 1000;
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 5 * 60 * 1000;
export const DEFAULT_MONITOR_INTERVAL_MS = 15 * 1000;
export const DEFAULT_SESSION_EXPIRY_MS = 24 * 60 * 60 * 1000;
/** A rebuild's reader threads unless told: one per core beyond the writing thread's, at most 3. */
const defaultRebuildThreads = () => Math.max(0, Math.min(3, os.availableParallelism() - 1));
const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, capMs: 5 * 60 * 1000, jitter: 0.2 };

const KNOWN = [
  "enabled",
  "stateDir",
  "processingStuckAfterMs",
  "retentionMs",
  "archiveRetentionMs",
  "recover",
  "create",
  "readOnly",
  "cacheDir",
  "ipcDir",
  "maxAttempts",
  "backoff",
  "queuedStuckAfterMs",
  "heartbeatTimeoutMs",
  "monitorIntervalMs",
  "sessionExpiryMs",
  "claimDurability",
  "rebuild",
  "rebuildThreads",
  "redact",
  "random",
  "now",
] as const;

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

/**
 * Settings renamed: the old name is refused with one line naming the new one, so a value is never
 * read under a name the docs no longer give (better-sqlite3's 'Option "memory" was removed').
 */
export const RENAMED_SETTINGS = [
  { option: ["hungAfterMs", "processingStuckAfterMs"], env: ["REQWATCH_HUNG_AFTER", "REQWATCH_PROCESSING_STUCK_AFTER"] },
] as const;

/** Refuse an environment that sets a renamed variable: checked wherever reqwatch starts (the tracker's open, the dashboard's start). */
export function refuseRenamedVariables(env: NodeJS.ProcessEnv): void {
  for (const {
    env: [was, is],
  } of RENAMED_SETTINGS) {
    if (env[was]) throw new ReqwatchError("BAD_INPUT", `${was} is renamed ${is}: set ${is} instead.`);
  }
}

/** Check options up front with exact messages, then fill in defaults from the environment. */
export function resolveTrackerOptions(options: TrackerOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedTrackerOptions {
  for (const key of Object.keys(options)) {
    const renamed = RENAMED_SETTINGS.find(({ option: [was] }) => was === key);
    if (renamed) throw new ReqwatchError("BAD_INPUT", `Option "${key}" is renamed "${renamed.option[1]}": give "${renamed.option[1]}" instead.`);
    if (!(KNOWN as readonly string[]).includes(key)) throw new ReqwatchError("BAD_INPUT", `Unknown option "${key}"${suggestion(key)}.`);
  }
  refuseRenamedVariables(env);
  if (options.stateDir !== undefined && (typeof options.stateDir !== "string" || options.stateDir === "")) {
    throw new ReqwatchError("BAD_INPUT", `Option "stateDir" must be a non-empty path.`);
  }
  for (const key of ["cacheDir", "ipcDir"] as const) {
    if (options[key] !== undefined && (typeof options[key] !== "string" || options[key] === ""))
      throw new ReqwatchError("BAD_INPUT", `Option "${key}" must be a non-empty path.`);
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw new ReqwatchError("BAD_INPUT", `Option "now" must be a function returning epoch milliseconds.`);
  }
  // Compiled once and frozen: every part of an opened folder reads the same settings, and none can change them for another.
  return Object.freeze({
    enabled: trackingEnabled(options, env),
    stateDir: resolveStateDirPath(options.stateDir, env),
    processingStuckAfterMs: durationSetting(
      options.processingStuckAfterMs,
      "processingStuckAfterMs",
      env,
      "REQWATCH_PROCESSING_STUCK_AFTER",
      DEFAULT_PROCESSING_STUCK_AFTER_MS,
    ),
    retentionMs: durationOrOff(options.retentionMs, "retentionMs", env, "REQWATCH_RETENTION", DEFAULT_RETENTION_MS),
    archiveRetentionMs: durationOrOff(options.archiveRetentionMs, "archiveRetentionMs", env, "REQWATCH_ARCHIVE_RETENTION", DEFAULT_ARCHIVE_RETENTION_MS),
    recover: options.recover ?? true,
    create: options.create ?? true,
    readOnly: options.readOnly ?? flagSetting(env, "REQWATCH_READ_ONLY"),
    cacheDir: options.cacheDir ? path.resolve(/*turbopackIgnore: true*/ options.cacheDir) : defaultCacheDir(env),
    ...((options.ipcDir ?? env.REQWATCH_IPC_DIR) && { ipcDir: path.resolve(/*turbopackIgnore: true*/ (options.ipcDir ?? env.REQWATCH_IPC_DIR)!) }),
    maxAttempts: options.maxAttempts === undefined ? DEFAULT_MAX_ATTEMPTS : positiveInteger(options.maxAttempts, "maxAttempts"),
    backoff: Object.freeze(resolveBackoff(options.backoff)),
    queuedStuckAfterMs: durationSetting(options.queuedStuckAfterMs, "queuedStuckAfterMs", env, "REQWATCH_QUEUED_STUCK_AFTER", DEFAULT_QUEUED_STUCK_AFTER_MS),
    heartbeatTimeoutMs: durationSetting(options.heartbeatTimeoutMs, "heartbeatTimeoutMs", env, "REQWATCH_HEARTBEAT_TIMEOUT", DEFAULT_HEARTBEAT_TIMEOUT_MS),
    monitorIntervalMs: durationSetting(options.monitorIntervalMs, "monitorIntervalMs", env, "REQWATCH_MONITOR_INTERVAL", DEFAULT_MONITOR_INTERVAL_MS),
    sessionExpiryMs: durationSetting(options.sessionExpiryMs, "sessionExpiryMs", env, "REQWATCH_SESSION_EXPIRY", DEFAULT_SESSION_EXPIRY_MS),
    claimDurability: resolveClaimDurability(options.claimDurability, env),
    rebuild: resolveRebuild(options.rebuild),
    rebuildThreads: options.rebuildThreads === undefined ? defaultRebuildThreads() : wholeNumber(options.rebuildThreads, "rebuildThreads"),
    redaction: resolveRedaction(options.redact, env),
    random: options.random ?? Math.random,
    now: options.now ?? Date.now,
  });
}

const REDACT_KEYS = ["raw", "patterns"];

/** The option if given, else the environment's `REQWATCH_REDACT_RAW` and `REQWATCH_REDACT_PATTERNS`; each checked here, at open. */
function resolveRedaction(value: unknown, env: NodeJS.ProcessEnv): Redaction {
  if (value !== undefined && (typeof value !== "object" || value === null || Array.isArray(value))) {
    throw new ReqwatchError("BAD_INPUT", `Option "redact" must be an object: { raw?: [...fields] | "all", patterns?: { kind: pattern } }.`);
  }
  const given = (value ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!REDACT_KEYS.includes(key)) throw new ReqwatchError("BAD_INPUT", `Unknown option "redact.${key}" (known: ${REDACT_KEYS.join(", ")}).`);
  }
  const raw = given.raw !== undefined ? rawFields(given.raw, `Option "redact.raw"`) : rawFields(splitList(env.REQWATCH_REDACT_RAW), "REQWATCH_REDACT_RAW");
  const patterns = given.patterns !== undefined ? given.patterns : patternsOfEnv(env.REQWATCH_REDACT_PATTERNS);
  const where = given.patterns !== undefined ? `Option "redact.patterns"` : "REQWATCH_REDACT_PATTERNS";
  if (typeof patterns !== "object" || patterns === null || Array.isArray(patterns) || patterns instanceof RegExp) {
    throw new ReqwatchError("BAD_INPUT", `${where} must be an object of kind and pattern, such as { "internal token": "itk_[A-Za-z0-9]{32}" }.`);
  }
  return { raw, patterns: Object.entries(patterns).map(([kind, pattern]) => compileExtraPattern(kind, pattern, where)) };
}

function splitList(value: string | undefined): string[] | "all" {
  const items = (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
  return items.length === 1 && items[0]!.toLowerCase() === "all" ? "all" : items;
}

function rawFields(value: unknown, where: string): RedactField[] {
  if (value === "all") return [...REDACT_FIELDS];
  if (!Array.isArray(value)) throw new ReqwatchError("BAD_INPUT", `${where} must be "all" or a list of fields (${REDACT_FIELDS.join(", ")}).`);
  return value.map((field) => {
    if ((REDACT_FIELDS as readonly unknown[]).includes(field)) return field as RedactField;
    const text = String(field);
    const close = REDACT_FIELDS.find((known) => known.toLowerCase() === text.toLowerCase() || distance(known.toLowerCase(), text.toLowerCase()) <= 2);
    throw new ReqwatchError(
      "BAD_INPUT",
      `${where}: unknown field ${JSON.stringify(field)}${close ? ` should be "${close}"` : ""} (fields: ${REDACT_FIELDS.join(", ")}, or "all").`,
    );
  });
}

function patternsOfEnv(value: string | undefined): unknown {
  if (!value?.trim()) return {};
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new ReqwatchError(
      "BAD_INPUT",
      `REQWATCH_REDACT_PATTERNS must be a JSON object of kind and pattern, such as {"internal token": "itk_[A-Za-z0-9]{32}"} (${(error as Error).message}).`,
    );
  }
}

function resolveClaimDurability(value: unknown, env: NodeJS.ProcessEnv): "atomic" | "full" {
  const chosen = value ?? env.REQWATCH_CLAIM_DURABILITY ?? "full";
  if (chosen !== "atomic" && chosen !== "full") {
    throw new ReqwatchError("BAD_INPUT", `Option "claimDurability" must be "atomic" or "full", not ${JSON.stringify(chosen)}.`);
  }
  return chosen;
}

function resolveRebuild(value: unknown): "at-open" | "in-background" {
  if (value === undefined || value === "at-open" || value === "in-background") return value ?? "at-open";
  throw new ReqwatchError("BAD_INPUT", `Option "rebuild" must be "at-open" or "in-background", not ${JSON.stringify(value)}.`);
}

function wholeNumber(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
    throw new ReqwatchError("BAD_INPUT", `Option "${name}" must be a whole number of at least 0.`);
  return value;
}

function positiveInteger(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new ReqwatchError("BAD_INPUT", `Option "${name}" must be a whole number of at least 1.`);
  }
  return value;
}

function resolveBackoff(backoff: Partial<BackoffOptions> | undefined): BackoffOptions {
  const merged = { ...DEFAULT_BACKOFF, ...backoff };
  for (const key of Object.keys(backoff ?? {})) {
    if (!(key in DEFAULT_BACKOFF)) throw new ReqwatchError("BAD_INPUT", `Unknown option "backoff.${key}" (known: baseMs, capMs, jitter).`);
  }
  if (!(merged.baseMs >= 0 && merged.capMs >= merged.baseMs)) {
    throw new ReqwatchError("BAD_INPUT", `Option "backoff" needs 0 <= baseMs <= capMs.`);
  }
  if (!(merged.jitter >= 0 && merged.jitter <= 1)) throw new ReqwatchError("BAD_INPUT", `Option "backoff.jitter" must be between 0 and 1.`);
  return merged;
}

export const DISABLED_ENV = "REQWATCH_DISABLED";

/**
 * Whether reqwatch records: `enabled: false` turns it off whatever the environment says (the
 * variable is not even read); otherwise `REQWATCH_DISABLED` does, so an operator can turn tracking
 * off without a code change even where the code says `enabled: true`.
 */
export function trackingEnabled(options: Pick<TrackerOptions, "enabled"> = {}, env: NodeJS.ProcessEnv = process.env): boolean {
  if (options.enabled !== undefined && typeof options.enabled !== "boolean") throw new ReqwatchError("BAD_INPUT", `Option "enabled" must be true or false.`);
  if (options.enabled === false) return false;
  return !flagSetting(env, DISABLED_ENV);
}

/** The option if given, else the environment variable (a duration such as `1h`), else the default. */
function durationSetting(value: unknown, name: string, env: NodeJS.ProcessEnv, variable: string, fallback: number): number {
  return value !== undefined ? positiveMs(value, name) : durationVariable(env, variable, fallback);
}

/** As `durationSetting`, where null (the option) or `off` (the variable) turns the feature off. */
function durationOrOff(value: unknown, name: string, env: NodeJS.ProcessEnv, variable: string, fallback: number): number | null {
  if (value === null) return null;
  if (value === undefined && env[variable]?.trim().toLowerCase() === "off") return null;
  return durationSetting(value, name, env, variable, fallback);
}
