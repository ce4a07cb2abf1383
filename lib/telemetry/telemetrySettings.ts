import os from "node:os";
import path from "node:path";
import { durationVariable } from "../model/duration";
import { ReqwatchError } from "../model/errors";
import { flagSetting, parseFlag } from "../model/flag";
import { defaultCacheDir } from "../fs/cacheDir";

// The received telemetry's settings, apart from what runs it (startTelemetry.ts, the receiver, the
// store, the price table): the CLI's help, the otel source and the views read them without loading those.

/** OTLP/HTTP's default port. */
export const DEFAULT_OTLP_PORT = 4318;
/** What the store keeps: lifecycles heard of within a day, and at most this much on disk. */
export const DEFAULT_TELEMETRY_RETENTION_MS = 24 * 60 * 60_000;
export const TELEMETRY_MAX_BYTES = 256 * 1024 * 1024;
/** A lifecycle still going on with nothing received for it this long is stuck: an agent's turn with no event for 10 minutes. */
export const DEFAULT_TELEMETRY_STUCK_AFTER_MS = 10 * 60_000;

export interface TelemetrySettings {
  /** The receiver's port (0: any free one), or null: no receiver. */
  port: number | null;
  keepMs: number;
  /** A lifecycle still going on with nothing received for it this long is stuck. */
  stuckAfterMs: number;
  /** Claude Code's folder, whose session files are read as they are written (lib/telemetry/agentFiles); null or absent: not read. */
  claudeDir?: string | null;
  /** Codex CLI's folder, whose rollout files are read the same way; null or absent: not read. */
  codexDir?: string | null;
  /** Gemini CLI's folder (~/.gemini), read the same way; null or absent: not read. */
  geminiDir?: string | null;
  /**
   * The folder of the user's one store of received telemetry and its receiver's lease, which every
   * dashboard naming it shares (lib/telemetry/sharedTelemetry.ts); null or absent: the store beside
   * each state folder's index, each dashboard with a receiver of its own.
   */
  dir?: string | null;
}

/** What REQWATCH_TELEMETRY_DIR is set to for the store beside each state folder's index. */
const BESIDE_STATE_FOLDER = "state-folder";

/**
 * `REQWATCH_OTLP_PORT` (a port, 0 for any free one, or off; default 4318), `REQWATCH_TELEMETRY_RETENTION`
 * (a duration; default 1d), `REQWATCH_TELEMETRY_STUCK_AFTER` (a duration; default 10m),
 * `REQWATCH_AGENT_FILES` (on or off, default on; `agentFiles` is the dashboard's `--agent-files`) and
 * `REQWATCH_CLAUDE_DIR` (Claude Code's folder; default $CLAUDE_CONFIG_DIR, as Claude Code reads it, else ~/.claude),
 * `REQWATCH_CODEX_DIR` (Codex CLI's folder; default $CODEX_HOME, as Codex reads it, else ~/.codex),
 * `REQWATCH_GEMINI_DIR` (Gemini CLI's folder; default $GEMINI_CLI_HOME/.gemini, as Gemini CLI reads it, else ~/.gemini),
 * `REQWATCH_TELEMETRY_DIR` (the store's folder; default `telemetry` in the cache folder).
 */
export function telemetrySettings(env: NodeJS.ProcessEnv = process.env, port?: string, agentFiles?: string): TelemetrySettings {
  const given = (port ?? env.REQWATCH_OTLP_PORT)?.trim().toLowerCase();
  let parsed: number | null = DEFAULT_OTLP_PORT;
  if (given === "off") parsed = null;
  else if (given !== undefined && given !== "") {
    parsed = /^\d{1,5}$/.test(given) ? Number(given) : NaN;
    if (!(parsed >= 0 && parsed <= 65535))
      throw new ReqwatchError(
        "BAD_INPUT",
        `Invalid ${port !== undefined ? "--otlp-port" : "REQWATCH_OTLP_PORT"}: ${JSON.stringify(given)}. Use a port (1 to 65535), 0 for any free one, or off.`,
      );
  }
  return {
    port: parsed,
    keepMs: durationVariable(env, "REQWATCH_TELEMETRY_RETENTION", DEFAULT_TELEMETRY_RETENTION_MS),
    stuckAfterMs: durationVariable(env, "REQWATCH_TELEMETRY_STUCK_AFTER", DEFAULT_TELEMETRY_STUCK_AFTER_MS),
    claudeDir: agentDir(env, agentFiles, "REQWATCH_CLAUDE_DIR", "CLAUDE_CONFIG_DIR", ".claude"),
    codexDir: agentDir(env, agentFiles, "REQWATCH_CODEX_DIR", "CODEX_HOME", ".codex"),
    geminiDir: geminiDir(env, agentFiles),
    dir: telemetryDir(env),
  };
}

/**
 * `REQWATCH_TELEMETRY_DIR`: a folder of its own (an absolute path), `state-folder` for beside each
 * state folder's index; unset, `telemetry` in reqwatch's cache folder, one for all the user's dashboards.
 */
function telemetryDir(env: NodeJS.ProcessEnv): string | null {
  const given = env.REQWATCH_TELEMETRY_DIR?.trim();
  if (!given) return path.join(defaultCacheDir(env), "telemetry");
  if (given === BESIDE_STATE_FOLDER) return null;
  if (!path.isAbsolute(given))
    throw new ReqwatchError(
      "BAD_INPUT",
      `Invalid REQWATCH_TELEMETRY_DIR: ${JSON.stringify(given)}. Use an absolute path (a folder of its own), or ${BESIDE_STATE_FOLDER} to keep what is received beside each state folder's index.`,
    );
  return path.resolve(given);
}

/** The folder of the store of received telemetry: the shared one, else the state folder's store folder (beside its index). */
export function telemetryStoreDir(settings: Pick<TelemetrySettings, "dir">, storeDir: string): string {
  return settings.dir ?? storeDir;
}

/** Whether the agents' own files are read: on when unset (the zero configuration). */
function agentFilesOn(env: NodeJS.ProcessEnv, flag: string | undefined): boolean {
  return flag !== undefined ? parseFlag(flag, "--agent-files") : flagSetting(env, "REQWATCH_AGENT_FILES", true);
}

const homeOf = (env: NodeJS.ProcessEnv) => env.HOME?.trim() || os.homedir();

/** An agent's folder to read (its REQWATCH_ variable, else its own, else under the home folder), or null when reading agents' files is off. */
function agentDir(env: NodeJS.ProcessEnv, flag: string | undefined, ours: string, its: string, home: string): string | null {
  return agentFilesOn(env, flag) ? path.resolve(/*turbopackIgnore: true*/ env[ours]?.trim() || env[its]?.trim() || path.join(homeOf(env), home)) : null;
}

/** Gemini CLI's folder to read: its own variable names a home, under which it keeps .gemini. */
function geminiDir(env: NodeJS.ProcessEnv, flag: string | undefined): string | null {
  // A folder of the user's, read at run time: nothing the bundler should trace into the build.
  return agentFilesOn(env, flag)
    ? path.resolve(/*turbopackIgnore: true*/ env.REQWATCH_GEMINI_DIR?.trim() || path.join(env.GEMINI_CLI_HOME?.trim() || homeOf(env), ".gemini"))
    : null;
}
