import { z } from "zod";
import { ReqwatchError } from "../../model/errors";
import { filterFields } from "../../model/listFilters";
import { SESSION_SOURCES } from "../../model/sessionSource";
import { COMMAND_STATUSES, type SessionResult } from "../../sessions/sessionTracker";
import { sessionSummaryLines } from "../../sessions/summary";
import { sessionsView } from "../../views/sessionsView";
import { telemetrySessionLines, telemetrySessionsOf } from "../../views/telemetrySessionsView";
import type { McpTool, ToolContext } from "../mcpTool";

function recorded<T>(outcome: SessionResult<T>): T {
  if (!outcome.ok) throw new ReqwatchError(outcome.error.code, outcome.error.message);
  return outcome.value;
}

/** A session's times as an agent reads them: ISO dates. */
function lastTimes(row: { firstSeen: number | null; lastSeen: number | null }) {
  const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());
  return { firstSeen: iso(row.firstSeen), lastSeen: iso(row.lastSeen) };
}

/** The sessions: the list, one's context, and recording into one (a command, a file, where the work stands). */
export function sessionTools({ tracker }: ToolContext): McpTool[] {
  const received = () => telemetrySessionsOf(tracker);
  return [
    {
      name: "list_sessions",
      title: "List sessions",
      description:
        "Sessions, most recently active first, as the dashboard's Sessions page lists them: the state folder's (recorded context, or carried by its requests: state, active task, commands, files, requests), and those received over OpenTelemetry (source otel: a Claude Code session.id or a GenAI conversation, from Claude Code or the service that sent it, with its turns, model calls, tools, tokens, cost and how many of its lifecycles are stuck). Follow with session_context for one.",
      inputSchema: { limit: z.number().int().min(1).max(1000).optional().describe("sessions to list (default 50)") },
      annotations: { readOnlyHint: true },
      run: ({ limit }: { limit?: number }) => {
        const rows = sessionsView(tracker, received());
        const shown = rows.slice(0, limit ?? 50);
        return { count: rows.length, sessions: shown.map((row) => ({ ...row, ...lastTimes(row) })) };
      },
    },
    {
      name: "session_context",
      title: "The session's context",
      description:
        "What a working session did and where it stands, for an agent resuming work: current focus, completed steps, next steps, modified files, blocking issues, patterns. The current session (updated within the expiry), or the one named. With source otel, a session received over OpenTelemetry (the one named, or the most recently active): its turns, cost and tokens per model, tools used, errors and what is stuck.",
      inputSchema: {
        sessionId: filterFields.sessionId.optional(),
        source: z.enum(SESSION_SOURCES).optional().describe("otel: a session received over OpenTelemetry; leave out for the state folder's"),
      },
      annotations: { readOnlyHint: true },
      run: ({ sessionId, source }: { sessionId?: string; source?: (typeof SESSION_SOURCES)[number] }) => {
        if (source) {
          const now = tracker.options.now();
          const sessions = received();
          const id = sessionId ?? sessions.list(now, 1)[0]?.sessionId;
          if (!id) return "No session was received over OpenTelemetry for this state folder.";
          const view = sessions.get(id, now);
          if (!view) throw new ReqwatchError("NOT_FOUND", `No telemetry received carries session ${id}; list_sessions lists those there are.`);
          return telemetrySessionLines(view, now).join("\n");
        }
        const id = sessionId ?? tracker.sessions.current();
        if (!id) return "No current session: none was updated within the expiry. Recording a command starts one.";
        const session = tracker.sessions.get(id);
        if (!session) throw new ReqwatchError("NOT_FOUND", `Session ${id} has no recorded context in the state folder (one received over OpenTelemetry is read with source: "otel"; list_sessions lists both).`);
        return sessionSummaryLines(session, tracker.options.now(), tracker.options.sessionExpiryMs).join("\n");
      },
    },
    {
      name: "record_command",
      title: "Record a command",
      description: "Record a command the agent ran into the current session (or the one named), with how it ended.",
      inputSchema: {
        command: z.string().min(1).max(10_000),
        status: z.enum(COMMAND_STATUSES),
        workflow: z.string().max(200).optional(),
        durationSeconds: z.number().nonnegative().optional(),
        sessionId: filterFields.sessionId.optional(),
      },
      run: ({ sessionId, workflow, durationSeconds, ...input }: { command: string; status: (typeof COMMAND_STATUSES)[number]; workflow?: string; durationSeconds?: number; sessionId?: string }) => {
        const session = recorded(tracker.sessions.recordCommand({ ...input, ...(workflow !== undefined && { workflow }), ...(durationSeconds !== undefined && { durationSeconds }) }, sessionId));
        return `Recorded in session ${session.session_id} (${session.commands_executed?.length ?? 0} commands).`;
      },
    },
    {
      name: "record_file",
      title: "Record a file change",
      description: "Record a file the agent changed, with a one-line summary, into the current session (or the one named).",
      inputSchema: { path: z.string().min(1).max(4096), summary: z.string().max(2000).optional(), workflow: z.string().max(200).optional(), sessionId: filterFields.sessionId.optional() },
      run: ({ sessionId, summary, workflow, path }: { path: string; summary?: string; workflow?: string; sessionId?: string }) => {
        const session = recorded(tracker.sessions.recordFile({ path, ...(summary !== undefined && { summary }), ...(workflow !== undefined && { workflow }) }, sessionId));
        return `Recorded in session ${session.session_id} (${Object.keys(session.files_modified ?? {}).length} files).`;
      },
    },
    {
      name: "record_snapshot",
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
      run: ({ sessionId, ...snapshot }: { sessionId?: string; activeTask?: string | null; completedSteps?: string[]; nextSteps?: string[]; keyFiles?: string[]; blockingIssues?: string[] }) => {
        const session = recorded(tracker.sessions.updateSnapshot(snapshot, sessionId));
        return `Recorded in session ${session.session_id}.`;
      },
    },
  ];
}
