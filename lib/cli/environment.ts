import { formatDuration } from "../model/duration";
import { REDACT_FIELDS } from "../model/redaction";
import {
  DEFAULT_ARCHIVE_RETENTION_MS,
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  DEFAULT_MONITOR_INTERVAL_MS,
  DEFAULT_PROCESSING_STUCK_AFTER_MS,
  DEFAULT_QUEUED_STUCK_AFTER_MS,
  DEFAULT_RETENTION_MS,
  DEFAULT_SESSION_EXPIRY_MS,
} from "../store/options";
import { DEFAULT_PORT } from "./commands/dashboard";
import { DEFAULT_OTLP_PORT, DEFAULT_TELEMETRY_RETENTION_MS, DEFAULT_TELEMETRY_STUCK_AFTER_MS } from "../telemetry/telemetrySettings";

const by = (ms: number) => formatDuration(ms);

/**
 * The settings reqwatch reads from its environment, as `reqwatch --help` lists them (docs/CONFIGURATION.md
 * says more). A test fails when the code reads a REQWATCH_ name not here.
 */
export const ENVIRONMENT: readonly (readonly [name: string, what: string])[] = [
  ["REQWATCH_STATE_DIR", "the state directory (else ./.reqwatch)"],
  ["REQWATCH_STORE", "a shared store (postgres://...) that create, update, get, list, retry, cancel and monitor use instead of the state directory"],
  ["REQWATCH_DISABLED", "1: record nothing, and every command a hook runs exits 0"],
  ["REQWATCH_FOLLOW", "0: a reading command on a folder of 2,000 requests or more starts no follower (reqwatch follow) to keep its index current"],
  ["REQWATCH_READ_ONLY", "1: only observe, even a folder reqwatch manages"],
  ["REQWATCH_CACHE_DIR", "the indexes of observed folders and the CLI's code caches (else $XDG_CACHE_HOME/reqwatch, else ~/.cache/reqwatch)"],
  ["REQWATCH_IPC_DIR", "a gateway's folder of response files (else ipc/ beside the state folder)"],
  ["REQWATCH_QUEUED_STUCK_AFTER", `a request queued this long is stuck (default ${by(DEFAULT_QUEUED_STUCK_AFTER_MS)})`],
  [
    "REQWATCH_PROCESSING_STUCK_AFTER",
    `a request processing this long with no worker holding it is stuck; recovery times it out (default ${by(DEFAULT_PROCESSING_STUCK_AFTER_MS)})`,
  ],
  ["REQWATCH_HEARTBEAT_TIMEOUT", `a claim with no heartbeat this long is stuck (default ${by(DEFAULT_HEARTBEAT_TIMEOUT_MS)})`],
  ["REQWATCH_MONITOR_INTERVAL", `how often the monitor runs (default ${by(DEFAULT_MONITOR_INTERVAL_MS)})`],
  ["REQWATCH_RETENTION", `finished requests are archived after this (default ${by(DEFAULT_RETENTION_MS)}; off turns it off)`],
  ["REQWATCH_ARCHIVE_RETENTION", `archived requests are dropped after this (default ${by(DEFAULT_ARCHIVE_RETENTION_MS)}; off keeps them)`],
  ["REQWATCH_SESSION_EXPIRY", `a session not updated this long is over (default ${by(DEFAULT_SESSION_EXPIRY_MS)})`],
  ["REQWATCH_CLAIM_DURABILITY", "full (default), or atomic"],
  ["REQWATCH_REDACT_RAW", `fields written without redacting secrets: ${REDACT_FIELDS.join(",")} or all`],
  ["REQWATCH_REDACT_PATTERNS", 'more secret formats, as JSON: {"internal token": "itk_[A-Za-z0-9]{32}"}'],
  ["REQWATCH_PORT", `the dashboard's port (else $PORT, else ${DEFAULT_PORT}, or the next free one when it is in use)`],
  ["REQWATCH_HOST", "the dashboard's address (else 127.0.0.1)"],
  ["REQWATCH_SOURCES", "other programs' queues the dashboard shows and reqwatch mcp lets an agent read, as --source takes them"],
  ["REQWATCH_OTEL", "1: the dashboard exports OpenTelemetry traces (reqwatch otel --help)"],
  ["REQWATCH_OTLP_PORT", `the dashboard's OTLP/HTTP receiver's port (default ${DEFAULT_OTLP_PORT}; 0 any free one; off turns it off)`],
  ["REQWATCH_AGENT_FILES", "on (default) or off: the dashboard reads Claude Code's, Codex CLI's and Gemini CLI's own session files as they write them"],
  ["REQWATCH_CLAUDE_DIR", "Claude Code's folder the dashboard reads (default $CLAUDE_CONFIG_DIR, else ~/.claude)"],
  ["REQWATCH_CODEX_DIR", "Codex CLI's folder the dashboard reads (default $CODEX_HOME, else ~/.codex)"],
  ["REQWATCH_GEMINI_DIR", "Gemini CLI's folder the dashboard reads (default $GEMINI_CLI_HOME/.gemini, else ~/.gemini)"],
  [
    "REQWATCH_TELEMETRY_DIR",
    "the folder of the store of received telemetry every dashboard of the user shares, with its one receiver (default telemetry in the cache folder; state-folder: beside each state folder's index, a receiver each)",
  ],
  ["REQWATCH_TELEMETRY_RETENTION", `received lifecycles are removed after this (default ${by(DEFAULT_TELEMETRY_RETENTION_MS)})`],
  ["REQWATCH_TELEMETRY_STUCK_AFTER", `a received turn or call with nothing new this long is stuck (default ${by(DEFAULT_TELEMETRY_STUCK_AFTER_MS)})`],
];

/** The environment's settings, for the end of `reqwatch --help`. */
export function environmentHelp(): string {
  const width = Math.max(...ENVIRONMENT.map(([name]) => name.length));
  return `\nEnvironment:\n${ENVIRONMENT.map(([name, what]) => `  ${name.padEnd(width)}  ${what}`).join("\n")}\n`;
}
