import os from "node:os";
import { ReqwatchError } from "../model/errors";
import { resolveTrackerOptions } from "../store/options";
import type { ResolvedSharedTrackerOptions, SharedTrackerOptions } from "../types";

const KNOWN = ["maxAttempts", "backoff", "heartbeatTimeoutMs", "monitorIntervalMs", "redact", "host", "poolSize", "random", "now"] as const;
/** The local tracker's options that have no meaning here: named, so that a user moving over knows why. */
const LOCAL_ONLY = new Set(["stateDir", "cacheDir", "ipcDir", "readOnly", "create", "recover", "rebuild", "rebuildThreads", "claimDurability"]);
const DEFAULT_POOL_SIZE = 4;

/** Check the options with exact messages, then fill in the defaults (the same settings, REQWATCH_* included, as the local tracker's). */
export function resolveSharedOptions(options: SharedTrackerOptions, env: NodeJS.ProcessEnv = process.env): ResolvedSharedTrackerOptions {
  for (const key of Object.keys(options)) {
    if (LOCAL_ONLY.has(key)) throw new ReqwatchError("BAD_INPUT", `Option "${key}" is the local store's; the shared store keeps everything in its database.`);
    if (!(KNOWN as readonly string[]).includes(key))
      throw new ReqwatchError("BAD_INPUT", `Unknown option "${key}" of the shared store; it takes ${KNOWN.join(", ")}.`);
  }
  if (options.host !== undefined && (typeof options.host !== "string" || options.host === "")) {
    throw new ReqwatchError("BAD_INPUT", `Option "host" must be a non-empty name.`);
  }
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  if (!Number.isInteger(poolSize) || poolSize < 1) throw new ReqwatchError("BAD_INPUT", `Option "poolSize" must be a whole number of at least 1.`);
  const { maxAttempts, backoff, heartbeatTimeoutMs, monitorIntervalMs, redact, random, now } = options;
  const local = resolveTrackerOptions({ maxAttempts, backoff, heartbeatTimeoutMs, monitorIntervalMs, redact, random, now }, env);
  return Object.freeze({
    maxAttempts: local.maxAttempts,
    backoff: local.backoff,
    heartbeatTimeoutMs: local.heartbeatTimeoutMs,
    monitorIntervalMs: local.monitorIntervalMs,
    redaction: local.redaction,
    host: options.host ?? os.hostname(),
    poolSize,
    random: local.random,
    now: local.now,
  });
}
