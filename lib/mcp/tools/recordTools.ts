import { z } from "zod";
import { ReqwatchError } from "../../model/errors";
import { filterFields } from "../../model/listFilters";
import { COMMAND_STATUSES } from "../../model/commandStatus";
import type { SessionResult } from "../../types";
import type { McpTool, ToolContext } from "../mcpTool";

function recorded<T>(outcome: SessionResult<T>): T {
  if (!outcome.ok) throw new ReqwatchError(outcome.error.code, outcome.error.message);
  return outcome.value;
}

/** Recording into the current session (or the one named): a command, a file, where the work stands. */
export function recordTools({ tracker }: ToolContext): McpTool[] {
  return [
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
      run: ({
        sessionId,
        workflow,
        durationSeconds,
        ...input
      }: {
        command: string;
        status: (typeof COMMAND_STATUSES)[number];
        workflow?: string;
        durationSeconds?: number;
        sessionId?: string;
      }) => {
        const session = recorded(
          tracker.sessions.recordCommand(
            { ...input, ...(workflow !== undefined && { workflow }), ...(durationSeconds !== undefined && { durationSeconds }) },
            sessionId,
          ),
        );
        return `Recorded in session ${session.session_id} (${session.commands_executed?.length ?? 0} commands).`;
      },
    },
    {
      name: "record_file",
      title: "Record a file change",
      description: "Record a file the agent changed, with a one-line summary, into the current session (or the one named).",
      inputSchema: {
        path: z.string().min(1).max(4096),
        summary: z.string().max(2000).optional(),
        workflow: z.string().max(200).optional(),
        sessionId: filterFields.sessionId.optional(),
      },
      run: ({ sessionId, summary, workflow, path }: { path: string; summary?: string; workflow?: string; sessionId?: string }) => {
        const session = recorded(
          tracker.sessions.recordFile({ path, ...(summary !== undefined && { summary }), ...(workflow !== undefined && { workflow }) }, sessionId),
        );
        return `Recorded in session ${session.session_id} (${Object.keys(session.files_modified ?? {}).length} files).`;
      },
    },
    {
      name: "record_snapshot",
      title: "Record where the work stands",
      description:
        "Set the session's context: the current focus, completed and next steps, key files, blocking issues. Lists replace the recorded ones; leave a field out to keep it.",
      inputSchema: {
        activeTask: z.string().max(2000).nullable().optional(),
        completedSteps: z.array(z.string().max(2000)).max(200).optional(),
        nextSteps: z.array(z.string().max(2000)).max(200).optional(),
        keyFiles: z.array(z.string().max(4096)).max(200).optional(),
        blockingIssues: z.array(z.string().max(2000)).max(200).optional(),
        sessionId: filterFields.sessionId.optional(),
      },
      run: ({
        sessionId,
        ...snapshot
      }: {
        sessionId?: string;
        activeTask?: string | null;
        completedSteps?: string[];
        nextSteps?: string[];
        keyFiles?: string[];
        blockingIssues?: string[];
      }) => {
        const session = recorded(tracker.sessions.updateSnapshot(snapshot, sessionId));
        return `Recorded in session ${session.session_id}.`;
      },
    },
  ];
}
