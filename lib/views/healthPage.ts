import { formatDuration } from "../model/duration";
import { costNote, formatCost } from "../model/money";
import type { UsageSums } from "../telemetry/store/queries/callSums";
import type { AgentFileCounts } from "../telemetry/store/queries/agentFiles";
import type { TelemetryStatus } from "../telemetry/startTelemetry";
import type { HealthView } from "./healthView";

/**
 * The Health page as plain data: each section a list of fields in words, the tables as rows. The
 * page's components only lay it out; the times stay times, written by the browser's clock.
 */

/** A piece of a shown value: words, a time (written as the clock shows it), a file name set as code, or the live stuck count. */
export type Part = string | { at: number } | { code: string } | { stuckCount: true };

/** One term and its value; `label` names the value for a screen reader where the term alone would not. */
export interface Field {
  term: string;
  value: Part[];
  label?: string;
}

/** A usage row's figures as shown: calls and tokens, and the cost with how it was reckoned (on hover). */
export interface UsageCells {
  counts: string[];
  cost: string;
  costNote: string;
}

export interface HealthPage {
  /** How often the page reads again: every second while the state directory is missing. */
  refreshMs: number;
  /** The state directory is missing: why, and since when the tables show what they show. */
  guardNotice: Part[] | null;
  folder: Field[];
  watcher: Field[];
  monitor: Field[];
  retention: Field[];
  /** Null when nothing is received (no receiver, no agents' files read). */
  telemetry: ReceivedTelemetry | null;
  unreadable: HealthView["unreadable"];
}

export interface ReceivedTelemetry {
  /** A damaged store was set aside: where, and what to do with it. */
  setAsideNotice: Part[] | null;
  fields: Field[];
  byDayAndModel: ({ day: string; model: string } & UsageCells)[];
  bySession: ({ session: string; sessionId: string | null; service: string; turns: number; tools: number; lastAt: number } & UsageCells)[];
  unmapped: TelemetryStatus["unmapped"];
}

/** The stuck monitor's thresholds, as the tracker resolved them. */
export interface StuckThresholds {
  queuedStuckAfterMs: number;
  heartbeatTimeoutMs: number;
  processingStuckAfterMs: number;
}

export const megabytes = (bytes: number) => (bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

export function healthPage(health: HealthView & { telemetry: TelemetryStatus | null }, thresholds: StuckThresholds): HealthPage {
  const { guard } = health;
  return {
    refreshMs: guard.problem ? 1000 : 5000,
    guardNotice: guard.problem ? [`${guard.problem} The tables show the requests as they were`, ...(guard.since ? [" ", { at: guard.since }] : []), "."] : null,
    folder: folderFields(health),
    watcher: watcherFields(health),
    monitor: monitorFields(health, thresholds),
    retention: retentionFields(health.retention),
    telemetry: health.telemetry && receivedTelemetry(health.telemetry),
    unreadable: health.unreadable,
  };
}

function folderFields(health: HealthView): Field[] {
  const { guard } = health;
  const observed = health.access === "observed";
  return [
    { term: "State directory", value: [health.stateDir] },
    {
      term: "Access",
      value: [
        health.access === "managed"
          ? `managed: ${health.accessReason}`
          : `observed, read-only: ${health.accessReason} (its index is kept in your cache directory)`,
      ],
    },
    { term: "Requests indexed", value: [health.requests.toLocaleString()] },
    { term: "Request files", value: [megabytes(health.requestFileBytes)] },
    { term: "Index size", value: [megabytes(health.indexBytes)] },
    {
      term: "Archive size",
      value: [observed ? "none: nothing is archived from an observed folder" : `${megabytes(health.archiveBytes)} (cleaned-up requests and the audit log)`],
    },
    { term: "Index generation", value: [health.generation] },
    {
      term: "Index rebuilds",
      value: guard.lastRebuild
        ? [
            `${guard.rebuilds} while running; latest `,
            { at: guard.lastRebuild.at },
            `, because ${guard.lastRebuild.cause} (${guard.lastRebuild.durationMs} ms)`,
          ]
        : ["none while running"],
    },
  ];
}

function watcherFields(health: HealthView): Field[] {
  const { ingest } = health;
  const { responses } = ingest;
  return [
    {
      term: "Watcher",
      value: [ingest.mode === "watching" ? "watching requests/" : `not running (${ingest.watcherError ?? "unknown error"}): reconciling alone, more often`],
    },
    {
      term: "Files another program wrote",
      value: [
        ingest.watcherIngested === 0
          ? "none since this server started (reqwatch's writers index what they write; what was there before is in the index)"
          : `${ingest.watcherIngested.toLocaleString()} since this server started, indexed as the watcher reported them${ingest.lastIngestLagMs === null ? "" : `; the latest batch ${ingest.lastIngestLagMs} ms after the report`}`,
      ],
    },
    {
      term: "Last reconciliation",
      value: ingest.lastReconcile
        ? [
            { at: ingest.lastReconcile.at },
            `, ${ingest.lastReconcile.scanned} files in ${ingest.lastReconcile.durationMs} ms, ${ingest.lastReconcile.fixes} fixes`,
          ]
        : ["not yet"],
    },
    {
      term: "Reconciliation fixes",
      value: [ingest.reconcileFixes === 0 ? "0" : `${ingest.reconcileFixes}: the watcher missed changes that reconciliation caught`],
    },
    {
      term: "Response files",
      value: [
        responses.mode === "off"
          ? "no ipc folder (this server reads none)"
          : responses.mode === "waiting"
            ? "no ipc folder beside the state directory yet: followed as soon as a gateway creates it (set REQWATCH_IPC_DIR to name another)"
            : `${responses.mode === "following" ? "following" : `not watched (${responses.error ?? "error"}): reconciling`} ${health.responses.files} in the ipc folder, ${health.responses.unreadable} unreadable, ${health.responses.callbackFailed} with a failed callback`,
      ],
    },
  ];
}

function monitorFields({ monitor }: HealthView, thresholds: StuckThresholds): Field[] {
  return [
    { term: "Last pass", value: monitor.lastPassAt ? [{ at: monitor.lastPassAt }, ` (${monitor.durationMs?.toFixed(1) ?? ""} ms)`] : ["not yet"] },
    { term: "Interval", value: [formatDuration(monitor.intervalMs)] },
    {
      term: "Thresholds",
      label: "Thresholds",
      value: [
        `queued stuck after ${formatDuration(thresholds.queuedStuckAfterMs)} (REQWATCH_QUEUED_STUCK_AFTER), claimed stuck after ${formatDuration(thresholds.heartbeatTimeoutMs)} without a heartbeat (REQWATCH_HEARTBEAT_TIMEOUT), processing stuck after ${formatDuration(thresholds.processingStuckAfterMs)} with no worker holding it (REQWATCH_PROCESSING_STUCK_AFTER)`,
      ],
    },
    // The count follows the feed hub live, as the header's badge does.
    { term: "Stuck", value: [monitor.lastPassAt === null ? "—" : { stuckCount: true }] },
    { term: "Last error", value: [monitor.lastError ?? "none"] },
  ];
}

function retentionFields(retention: HealthView["retention"]): Field[] {
  const requests: Field = {
    term: "Requests",
    value: [
      !retention.active
        ? `off: ${retention.inactiveReason}`
        : retention.retentionMs === null
          ? "kept (REQWATCH_RETENTION=off)"
          : `finished ones archived and removed ${formatDuration(retention.retentionMs)} after their last update, every ${formatDuration(retention.intervalMs)}`,
    ],
  };
  if (!retention.active) return [requests];
  const { latest } = retention;
  return [
    requests,
    {
      term: "Archive",
      value: [
        retention.archiveRetentionMs === null
          ? "kept forever (REQWATCH_ARCHIVE_RETENTION=off)"
          : `kept ${formatDuration(retention.archiveRetentionMs)}, with the audit log`,
      ],
    },
    {
      term: "Last run",
      value: latest
        ? [
            { at: latest.finishedAt },
            `: ${latest.error ? `failed: ${latest.error}` : `removed ${latest.removed.toLocaleString()}, skipped ${latest.skipped}, archive dropped ${latest.archiveDropped.toLocaleString()}`}`,
          ]
        : ["not yet"],
    },
  ];
}

const AGENTS = [
  ["Claude Code", "claude-code", "claudeDir"],
  ["Codex CLI", "codex", "codexDir"],
  ["Gemini CLI", "gemini-cli", "geminiDir"],
] as const;

function receivedTelemetry(telemetry: TelemetryStatus): ReceivedTelemetry {
  const { setAside, receiver, receivedBy } = telemetry;
  const fields: Field[] = [
    {
      term: "Receiver",
      value: [receiver.url ? `OTLP/HTTP on ${receiver.url} (/v1/traces, /v1/logs, /v1/metrics)` : `not listening: ${receiver.error ?? "starting, or off"}`],
    },
    ...(receivedBy
      ? [
          {
            term: "Received by",
            value: [
              receivedBy.thisDashboard
                ? `this dashboard (pid ${receivedBy.pid})`
                : `another dashboard of yours (pid ${receivedBy.pid}); this one reads the same store, and receives if that one stops`,
            ],
          },
        ]
      : []),
    ...AGENTS.map(([label, agent, dir]): Field => {
      const folder = telemetry[dir];
      return {
        term: `${label}'s files`,
        value: folder
          ? agentFilesRead(
              telemetry.agentFiles.find((row) => row.agent === agent),
              folder,
            )
          : ["not read (REQWATCH_AGENT_FILES=off)"],
      };
    }),
    { term: "Store", value: [`${telemetry.file} (${megabytes(telemetry.bytes)}; kept ${formatDuration(telemetry.keepMs)})`] },
    ...telemetry.intake.map((row): Field => ({
      term: row.signal,
      value: [
        `${row.records.toLocaleString()} records in ${row.exports.toLocaleString()} exports${row.rejected ? `, ${row.rejected.toLocaleString()} rejected` : ""}, the last `,
        { at: row.lastAt },
      ],
    })),
  ];
  return {
    setAsideNotice: setAside.length
      ? [
          "The telemetry store was found damaged and set aside as ",
          { code: setAside[0]! },
          `${setAside.length > 1 ? ` (and ${setAside.length - 1} earlier)` : ""}; a new one was started. What was received before is in that copy: delete it once you no longer need it.`,
        ]
      : null,
    fields,
    byDayAndModel: telemetry.usage.byDayAndModel.map((row) => ({ day: row.day, model: row.model, ...usageCells(row) })),
    bySession: telemetry.usage.bySession.map((row) => ({
      session: row.session,
      sessionId: row.sessionId,
      service: row.service,
      turns: row.turns,
      tools: row.tools,
      lastAt: row.lastAt,
      ...usageCells(row),
    })),
    unmapped: telemetry.unmapped,
  };
}

/** What was read of one agent's own files: how many, where, what was skipped, and when last. */
function agentFilesRead(row: AgentFileCounts | undefined, folder: string): Part[] {
  if (!row) return [`none yet in ${folder}`];
  return [
    `${row.files.toLocaleString()} files in ${folder}, ${row.lines.toLocaleString()} lines read${row.malformed ? `, ${row.malformed.toLocaleString()} malformed skipped` : ""}${row.oversized ? `, ${row.oversized.toLocaleString()} too long skipped` : ""}, the last `,
    { at: row.lastReadAt },
  ];
}

function usageCells(row: UsageSums): UsageCells {
  return {
    counts: [row.calls, row.inputTokens, row.outputTokens, row.cacheReadTokens, row.cacheWriteTokens].map((value) => value.toLocaleString("en-US")),
    cost: formatCost(row),
    costNote: costNote(row),
  };
}
