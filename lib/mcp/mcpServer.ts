import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { z } from "zod";
import { filterFields, MAX_PAGE_SIZE, type ListFilters } from "../model/listFilters";
import { isReqwatchError, ReqwatchError } from "../model/errors";
import { parseDuration } from "../model/duration";
import type { State } from "../model/states";
import { COMMAND_STATUSES } from "../model/commandStatus";
import type { SessionResult } from "../types";
import { sessionSummaryLines } from "../sessions/summary";
import type { Recording } from "../roles/recording";
import type { Operator } from "../roles/operator";
import { displayJson } from "../model/displayText";
import { explainRequest } from "../views/explainView";
import { requestDetailView } from "../views/requestsView";
import { sourceReport } from "../views/sourceView";
import { sourceRequestView, sourceRows } from "../views/sourceRowsView";
import { explainSourceRequest } from "../views/sourceExplainView";
import { readSourceOnce } from "../sources/liveSource";
import { ConfiguredSources } from "../sources/configuredSources";
import { otelSpec, type SourceSpec } from "../sources/sourceSpec";
import { telemetrySettings, telemetryStoreDir } from "../telemetry/telemetrySettings";
import { SESSION_SOURCES } from "../model/sessionSource";
import { sessionsView } from "../views/sessionsView";
import { missingRequestError } from "../views/unreadableRequest";
import { telemetrySessionLines, telemetrySessionsOf } from "../views/telemetrySessionsView";

export { LineTransport } from "./stdioTransport";

/** Who the audit log and the requests' histories name for what an agent did through this server. */
export const MCP_ACTOR = "mcp";

const requestId = filterFields.sessionId.describe("a request id");
const ids = z.array(requestId).min(1).max(1000);
const sourceArg = z.string().min(1).max(4096);

function text(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: typeof value === "string" ? value : displayJson(value) }] };
}

/** A tool's failure as an MCP tool error the agent reads (the library's message), never a crash of the server. */
function failure(error: unknown): CallToolResult {
  const message = isReqwatchError(error) ? error.message : `Unexpected error: ${(error as Error)?.message ?? String(error)}`;
  return { isError: true, content: [{ type: "text", text: message }] };
}

function tool<A>(run: (args: A) => unknown | Promise<unknown>): (args: A) => Promise<CallToolResult> {
  return async (args) => {
    try {
      return text(await run(args));
    } catch (error) {
      return failure(error);
    }
  };
}

function recorded<T>(outcome: SessionResult<T>): T {
  if (!outcome.ok) throw new ReqwatchError(outcome.error.code, outcome.error.message);
  return outcome.value;
}

function mustExist<T>(value: T | null, message: string): T {
  if (value === null) throw new ReqwatchError("NOT_FOUND", message);
  return value;
}

function fail(error: ReqwatchError): never {
  throw error;
}

const CONFIRM = "Leave out (or false) for the dry run; true, with the dryRunId the dry run returned and the same other arguments, to act on exactly what it described (a confirmation that asks otherwise is refused).";

/**
 * The MCP server over one folder (its reader, operator and the library's tracker for the session records): read tools (stuck, list, get, explain, cleanup's dry run, the
 * session's context) and write tools (retry, cancel, recording into the session). Writes go
 * through the library, so a folder reqwatch only observes refuses them with READ_ONLY, returned as
 * a tool error. Retry and cancel are the dashboard's audited bulk actions: a dry run first, then a
 * run bound to it with `confirm: true`, named `mcp` in the audit log and in each request's history.
 * `source_queue` reads only the `sources` the user started it with, and those that name no path.
 */
export function createMcpServer({ tracker, reader, operator }: Pick<Recording, "tracker" | "reader" | "operator">, version: string, sources: readonly SourceSpec[] = []): McpServer {
  const server = new McpServer({ name: "reqwatch", version });
  const stuck = () => reader.stuck();
  const readable = new ConfiguredSources(sources, () => {
    const settings = telemetrySettings();
    return otelSpec(telemetryStoreDir(settings, reader.stateDir.storeDir), settings.stuckAfterMs);
  });
  const received = () => telemetrySessionsOf(reader);
  /** A row of a source this server reads, as its page shows it. */
  const sourceRow = (source: string, id: string) =>
    mustExist(
      readSourceOnce(readable.resolve(source), (live) => sourceRequestView(live, id, reader.options.now())),
      `${source} has no row ${id} (it may have been trimmed by the retention, or deleted by its owner).`,
    );

  server.registerTool(
    "stuck",
    {
      title: "What is stuck now",
      description:
        "Requests stuck now and why, by the stuck monitor's rules: queued too long with no worker claiming, processing past a deadline, or without a heartbeat with its worker gone or unknown. Each has its reason in words. Follow with explain_request for one of them.",
      inputSchema: { workspace: filterFields.workspace.optional().describe("only this workspace") },
      annotations: { readOnlyHint: true },
    },
    tool(({ workspace }: { workspace?: string }) => {
      const rows = stuck().filter((row) => workspace === undefined || row.workspace === workspace);
      return { count: rows.length, stuck: rows.map((row) => ({ ...row, since: new Date(row.since).toISOString() })) };
    }),
  );

  server.registerTool(
    "list_requests",
    {
      title: "List and search requests",
      description:
        "Requests, newest update first by default, filtered like the dashboard's table: states, workspace, session, words in the prompt/output/error, failed callbacks, creation window. One page at a time: pass nextCursor back as cursor for the next page.",
      inputSchema: {
        states: z.array(filterFields.state).optional().describe("any of these states"),
        workspace: filterFields.workspace.optional(),
        sessionId: filterFields.sessionId.optional(),
        text: filterFields.text.optional().describe("words that must appear in the prompt, output or error"),
        callbackFailed: z.boolean().optional().describe("only requests whose callback delivery failed"),
        createdWithin: z.string().optional().describe("created within this long before now: 15m, 24h, 7d"),
        sort: filterFields.sort.optional(),
        order: filterFields.order.optional(),
        limit: z.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe("rows per page (default 50)"),
        cursor: z.string().optional().describe("nextCursor of the previous page"),
        source: sourceArg.optional().describe(`list another queue instead, read-only, in its id order: ${readable.list().join(", ")} (otel: the turns, model calls and messages received over OpenTelemetry)`),
      },
      annotations: { readOnlyHint: true },
    },
    tool(({ createdWithin, source, ...filters }: ListFilters & { createdWithin?: string; source?: string }) => {
      const listed = { ...filters, ...(createdWithin !== undefined && { createdFrom: reader.options.now() - parseDuration(createdWithin, "createdWithin") }) };
      if (source === undefined) return reader.list(listed);
      const unfit = (["callbackFailed", "sort"] as const).filter((key) => filters[key] !== undefined);
      if (unfit.length) throw new ReqwatchError("BAD_INPUT", `${unfit.join(", ")} ${unfit.length === 1 ? "is" : "are"} not for a source: it records no callbacks and lists in its id order (order sets which way); nothing was read.`);
      return readSourceOnce(readable.resolve(source), (live) => sourceRows(live, listed, reader.options.now()));
    }),
  );

  server.registerTool(
    "get_request",
    {
      title: "One request",
      description:
        "One request's whole record: state, fields, claim, history. Text over 100,000 characters is cut (truncated says how long it was); `reqwatch get <id>` prints it whole. With source, a row of another queue as its page shows it: a received turn or model call (source otel, id turn-3) with its steps (model calls, tool uses, errors) and why it is stuck.",
      inputSchema: { requestId, source: sourceArg.optional().describe(`the queue the id is in, when not the state folder: ${readable.list().join(", ")}`) },
      annotations: { readOnlyHint: true },
    },
    tool(({ requestId: id, source }: { requestId: string; source?: string }) => {
      if (source !== undefined) return sourceRow(source, id);
      const detail = requestDetailView(reader, id, stuck()) ?? fail(missingRequestError(reader, id));
      return { request: detail.request, truncated: detail.truncated, stuckReason: detail.stuckReason, actions: detail.actions };
    }),
  );

  server.registerTool(
    "explain_request",
    {
      title: "Explain one request",
      description:
        "One request's story: time in each state, its attempts (who claimed it, how each ended), deliveries dropped by the claim fence, its callback and response file, why it is stuck, its session's focus and blockers, and what to do next with the CLI command for it. With source, a row of another queue: a received turn or model call (source otel, id turn-3): time in each state, model, tokens and cost, its error, why it is stuck, and its steps.",
      inputSchema: { requestId, source: sourceArg.optional().describe(`the queue the id is in, when not the state folder: ${readable.list().join(", ")}`) },
      annotations: { readOnlyHint: true },
    },
    tool(({ requestId: id, source }: { requestId: string; source?: string }) => {
      if (source !== undefined) {
        const explanation = explainSourceRequest(sourceRow(source, id), reader.options.now());
        return `${explanation.lines.join("\n")}\n\n${displayJson(explanation)}`;
      }
      const explanation = explainRequest(reader, id, stuck()) ?? fail(missingRequestError(reader, id));
      return `${explanation.lines.join("\n")}\n\n${displayJson(explanation)}`;
    }),
  );

  server.registerTool(
    "retry_requests",
    {
      title: "Retry requests",
      description: `Send failed, timed-out, or processing requests whose worker is gone, back to the queue (by ids, or every request in the given states and workspace). ${CONFIRM} Audited in the dashboard's audit log as by mcp.`,
      inputSchema: {
        ids: ids.optional(),
        states: z.array(filterFields.state).optional().describe("instead of ids: every request in these states"),
        workspace: filterFields.workspace.optional().describe("with states: only this workspace"),
        confirm: z.boolean().optional(),
        dryRunId: z.string().optional().describe("the id the dry run returned (required with confirm)"),
      },
      annotations: { destructiveHint: false, idempotentHint: true },
    },
    tool(async ({ ids: chosen, states, workspace, confirm, dryRunId }: { ids?: string[]; states?: State[]; workspace?: string; confirm?: boolean; dryRunId?: string }) => {
      const filter = states || workspace !== undefined ? { states, ...(workspace !== undefined && { workspace }) } : undefined;
      return act(operator, { kind: "retry", ids: chosen, filter }, confirm, dryRunId);
    }),
  );

  server.registerTool(
    "cancel_requests",
    {
      title: "Cancel requests",
      description: `Cancel created, queued or processing requests: they go to failed with reason cancelled, and a worker's late result is dropped. ${CONFIRM} Audited as by mcp.`,
      inputSchema: { ids, confirm: z.boolean().optional(), dryRunId: z.string().optional().describe("the id the dry run returned (required with confirm)") },
      annotations: { destructiveHint: true },
    },
    tool(({ ids: chosen, confirm, dryRunId }: { ids: string[]; confirm?: boolean; dryRunId?: string }) => act(operator, { kind: "cancel", ids: chosen }, confirm, dryRunId)),
  );

  server.registerTool(
    "cleanup_dry_run",
    {
      title: "What a cleanup would remove (dry run)",
      description:
        "A dry run only: how many finished requests a cleanup would archive and delete (not updated for olderThan; completed, failed and timeout by default). Nothing changes; a person runs the cleanup from the dashboard or with `reqwatch cleanup`.",
      inputSchema: { olderThan: z.string().describe("not updated for this long: 24h, 7d"), states: z.array(filterFields.state).optional() },
      annotations: { readOnlyHint: true },
    },
    tool(({ olderThan, states }: { olderThan: string; states?: State[] }) => {
      const report = operator.cleanup({ dryRun: true, olderThanMs: parseDuration(olderThan, "olderThan"), ...(states && { states }) });
      return { matched: report.matched, byState: report.byState, cutoff: new Date(report.cutoff).toISOString(), firstIds: report.ids.slice(0, 20) };
    }),
  );

  server.registerTool(
    "source_queue",
    {
      title: "Another program's queue: what is stuck and why",
      description:
        "Reads another program's queue, read-only, and says which messages or jobs are stuck by that program's own rules, with the counts per state: claude-mem's pending_messages in any of its schema generations (processing past its 5-minute limit, a worker pid that is gone, pending with no worker, left over in a table a newer claude-mem no longer processes; from v13.4.0 also `worker`: what its worker holds in memory now, or that it is not running), or a SQLite job table a mapping file describes (done marker, pid file, age); or otel, the lifecycles the dashboard's OpenTelemetry receiver kept for this state folder (agents' turns and runs, model calls, jobs and messages; stuck when nothing arrives for them). The same as `reqwatch source`, for the sources the user gave this server (`reqwatch mcp --source`, REQWATCH_SOURCES) and claude-mem in its default place.",
      inputSchema: {
        source: sourceArg
          .optional()
          .describe(`one of the sources this server was given, by name or as written: ${readable.list().join(", ")}; claude-mem is the default`),
        all: z.boolean().optional().describe("list every message, not only the stuck ones"),
        limit: z.number().int().min(1).max(1000).optional().describe("messages to list (default 50)"),
      },
      annotations: { readOnlyHint: true },
    },
    tool(({ source, all, limit }: { source?: string; all?: boolean; limit?: number }) => sourceReport(readable.resolve(source ?? "claude-mem"), { all, limit: limit ?? 50 }, reader.options.now())),
  );

  server.registerTool(
    "list_sessions",
    {
      title: "List sessions",
      description:
        "Sessions, most recently active first, as the dashboard's Sessions page lists them: the state folder's (recorded context, or carried by its requests: state, active task, commands, files, requests), and those received over OpenTelemetry (source otel: a Claude Code session.id or a GenAI conversation, from Claude Code or the service that sent it, with its turns, model calls, tools, tokens, cost and how many of its lifecycles are stuck). Follow with session_context for one.",
      inputSchema: { limit: z.number().int().min(1).max(1000).optional().describe("sessions to list (default 50)") },
      annotations: { readOnlyHint: true },
    },
    tool(({ limit }: { limit?: number }) => {
      const rows = sessionsView(reader, received());
      const shown = rows.slice(0, limit ?? 50);
      return { count: rows.length, sessions: shown.map((row) => ({ ...row, ...lastTimes(row) })) };
    }),
  );

  server.registerTool(
    "session_context",
    {
      title: "The session's context",
      description:
        "What a working session did and where it stands, for an agent resuming work: current focus, completed steps, next steps, modified files, blocking issues, patterns. The current session (updated within the expiry), or the one named. With source otel, a session received over OpenTelemetry (the one named, or the most recently active): its turns, cost and tokens per model, tools used, errors and what is stuck.",
      inputSchema: {
        sessionId: filterFields.sessionId.optional(),
        source: z.enum(SESSION_SOURCES).optional().describe("otel: a session received over OpenTelemetry; leave out for the state folder's"),
      },
      annotations: { readOnlyHint: true },
    },
    tool(({ sessionId, source }: { sessionId?: string; source?: (typeof SESSION_SOURCES)[number] }) => {
      if (source) {
        const now = reader.options.now();
        const sessions = received();
        const id = sessionId ?? sessions.list(now, 1)[0]?.sessionId;
        if (!id) return "No session was received over OpenTelemetry for this state folder.";
        const view = sessions.get(id, now);
        if (!view) throw new ReqwatchError("NOT_FOUND", `No telemetry received carries session ${id}; list_sessions lists those there are.`);
        return telemetrySessionLines(view, now).join("\n");
      }
      const id = sessionId ?? reader.sessions.current();
      if (!id) return "No current session: none was updated within the expiry. Recording a command starts one.";
      const session = reader.sessions.get(id);
      if (!session) throw new ReqwatchError("NOT_FOUND", `Session ${id} has no recorded context in the state folder (one received over OpenTelemetry is read with source: "otel"; list_sessions lists both).`);
      return sessionSummaryLines(session, reader.options.now(), reader.options.sessionExpiryMs).join("\n");
    }),
  );

  server.registerTool(
    "record_command",
    {
      title: "Record a command",
      description: "Record a command the agent ran into the current session (or the one named), with how it ended.",
      inputSchema: {
        command: z.string().min(1).max(10_000),
        status: z.enum(COMMAND_STATUSES),
        workflow: z.string().max(200).optional(),
        durationSeconds: z.number().nonnegative().optional(),
        sessionId: filterFields.sessionId.optional(),
      },
    },
    tool(({ sessionId, workflow, durationSeconds, ...input }: { command: string; status: (typeof COMMAND_STATUSES)[number]; workflow?: string; durationSeconds?: number; sessionId?: string }) => {
      const session = recorded(tracker.sessions.recordCommand({ ...input, ...(workflow !== undefined && { workflow }), ...(durationSeconds !== undefined && { durationSeconds }) }, sessionId));
      return `Recorded in session ${session.session_id} (${session.commands_executed?.length ?? 0} commands).`;
    }),
  );

  server.registerTool(
    "record_file",
    {
      title: "Record a file change",
      description: "Record a file the agent changed, with a one-line summary, into the current session (or the one named).",
      inputSchema: { path: z.string().min(1).max(4096), summary: z.string().max(2000).optional(), workflow: z.string().max(200).optional(), sessionId: filterFields.sessionId.optional() },
    },
    tool(({ sessionId, summary, workflow, path }: { path: string; summary?: string; workflow?: string; sessionId?: string }) => {
      const session = recorded(tracker.sessions.recordFile({ path, ...(summary !== undefined && { summary }), ...(workflow !== undefined && { workflow }) }, sessionId));
      return `Recorded in session ${session.session_id} (${Object.keys(session.files_modified ?? {}).length} files).`;
    }),
  );

  server.registerTool(
    "record_snapshot",
    {
      title: "Record where the work stands",
      description: "Set the session's context: the current focus, completed and next steps, key files, blocking issues. Lists replace the recorded ones; leave a field out to keep it.",
      inputSchema: {
        activeTask: z.string().max(2000).nullable().optional(),
        completedSteps: z.array(z.string().max(2000)).max(200).optional(),
        nextSteps: z.array(z.string().max(2000)).max(200).optional(),
        keyFiles: z.array(z.string().max(4096)).max(200).optional(),
        blockingIssues: z.array(z.string().max(2000)).max(200).optional(),
        sessionId: filterFields.sessionId.optional(),
      },
    },
    tool(({ sessionId, ...snapshot }: { sessionId?: string; activeTask?: string | null; completedSteps?: string[]; nextSteps?: string[]; keyFiles?: string[]; blockingIssues?: string[] }) => {
      const session = recorded(tracker.sessions.updateSnapshot(snapshot, sessionId));
      return `Recorded in session ${session.session_id}.`;
    }),
  );

  return server;
}

type ActionInput = Parameters<Operator["actions"]["dryRun"]>[0];

/** A session's times as an agent reads them: ISO dates. */
function lastTimes(row: { firstSeen: number | null; lastSeen: number | null }) {
  const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());
  return { firstSeen: iso(row.firstSeen), lastSeen: iso(row.lastSeen) };
}

/**
 * The dry run, or (confirmed) the run bound to it, as the dashboard's audited action by `mcp`. The
 * dry run is kept in the index, so a client that starts a server per call confirms it in another.
 */
async function act(operator: Operator, input: ActionInput, confirm: boolean | undefined, dryRunId: string | undefined) {
  if (!confirm) {
    const dryRun = operator.actions.dryRun(input);
    return { dryRun: true, ...dryRun, next: `Nothing changed. To act on exactly this, call again with the same arguments, confirm: true and dryRunId: "${dryRun.dryRunId}".` };
  }
  if (!dryRunId) throw new ReqwatchError("BAD_INPUT", "confirm needs a dryRunId: call without confirm first, check what it would change, then confirm with the dryRunId it returned.");
  const entry = await operator.actions.run({ ...input, dryRunId }, { by: MCP_ACTOR });
  return { dryRun: false, entry };
}
