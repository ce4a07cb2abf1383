import { z } from "zod";
import { ReqwatchError } from "../../model/errors";
import { filterFields } from "../../model/listFilters";
import { SESSION_SOURCES } from "../../model/sessionSource";
import { sessionSummaryLines } from "../../sessions/summary";
import { sessionsView } from "../../views/sessionsView";
import { telemetrySessionLines, telemetrySessionsOf } from "../../views/telemetrySessionsView";
import type { McpTool, ToolContext } from "../mcpTool";

/** A session's times as an agent reads them: ISO dates. */
function lastTimes(row: { firstSeen: number | null; lastSeen: number | null }) {
  const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());
  return { firstSeen: iso(row.firstSeen), lastSeen: iso(row.lastSeen) };
}

/** The sessions: the list, and one's context. */
export function sessionTools({ reader }: ToolContext): McpTool[] {
  const received = () => telemetrySessionsOf(reader);
  return [
    {
      name: "list_sessions",
      title: "List sessions",
      description:
        "Sessions, most recently active first, as the dashboard's Sessions page lists them: the state folder's (recorded context, or carried by its requests: state, active task, commands, files, requests), and those received over OpenTelemetry (source otel: a Claude Code session.id or a GenAI conversation, from Claude Code or the service that sent it, with its turns, model calls, tools, tokens, cost and how many of its lifecycles are stuck). Follow with session_context for one.",
      inputSchema: { limit: z.number().int().min(1).max(1000).optional().describe("sessions to list (default 50)") },
      annotations: { readOnlyHint: true },
      run: ({ limit }: { limit?: number }) => {
        const rows = sessionsView(reader, received());
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
        if (!session)
          throw new ReqwatchError(
            "NOT_FOUND",
            `Session ${id} has no recorded context in the state folder (one received over OpenTelemetry is read with source: "otel"; list_sessions lists both).`,
          );
        return sessionSummaryLines(session, reader.options.now(), reader.options.sessionExpiryMs).join("\n");
      },
    },
  ];
}
