import type { Command } from "commander";
import { ReqwatchError } from "../../model/errors";
import { readSessionFile } from "../../stateFiles/sessionFile";
import { lastActive } from "../../sessions/sessionState";
import { parseSessionSource } from "../../model/sessionSource";
import { sessionsView } from "../../views/sessionsView";
import { telemetrySessionFigures } from "../../views/sessionFigures";
import { telemetrySessionLines, telemetrySessionsOf } from "../../views/telemetrySessionsView";
import { COMMAND_STATUSES } from "../../model/commandStatus";
import type { SessionResult } from "../../types";
import { sessionSummaryLines } from "../../sessions/summary";
import { stopIfTrackingOff, trackerFor, trackingIsOff, withLibraryTracker, withTracker } from "../context";
import { printJson, printLine, printTable } from "../output";

const list = (value: string, previous: string[] = []) => [...previous, value];

/** A recording that failed is this command's failure (exit 1), with the tracker's message. */
function unwrap<T>(result: SessionResult<T>): T {
  if (!result.ok) throw new ReqwatchError(result.error.code, result.error.message);
  return result.value;
}

export function registerSession(program: Command): void {
  const session = program
    .command("session")
    .description("Session context: start, record commands and files, snapshot, show, list, reset")
    .summary("Record and show session context");
  registerSessionStart(session);
  registerSessionCommand(session);
  registerSessionFile(session);
  registerSessionSnapshot(session);
  registerSessionShow(session);
  registerSessionList(session);
  registerSessionReset(session);
}

/** `reqwatch session start`: continue the recent session or start one. */
function registerSessionStart(session: Command): void {
  session
    .command("start")
    .description("Continue the session updated in the last 24 hours, or start a new one; prints its id")
    .option("--json", "print the outcome as JSON")
    .action(async (options, command: Command) => {
      const outcome = unwrap(await withLibraryTracker(command, (tracker) => tracker.sessions.start(), true));
      if (options.json) return printJson(outcome);
      printLine(outcome.session.session_id);
    });
}

/** `reqwatch session command`: record a command run. */
function registerSessionCommand(session: Command): void {
  session
    .command("command <text>")
    .description("Record a command run in the session")
    .requiredOption("--status <status>", `how it ended: ${COMMAND_STATUSES.join(", ")}`)
    .option("--workflow <name>", "the workflow it used")
    .option("--duration <seconds>", "how long it took, in seconds", Number)
    .option("--session <id>", "this session (default: the current one)")
    .option("--json", "print the session as JSON")
    .action(async (text: string, options, command: Command) => {
      const result = unwrap(
        await withLibraryTracker(
          command,
          (tracker) =>
            tracker.sessions.recordCommand(
              { command: text, status: options.status, workflow: options.workflow, durationSeconds: options.duration },
              options.session,
            ),
          true,
        ),
      );
      if (options.json) return printJson(result);
      printLine(`Recorded in session ${result.session_id} (${result.commands_executed?.length ?? 0} commands).`);
    });
}

/** `reqwatch session file`: record a file modification. */
function registerSessionFile(session: Command): void {
  session
    .command("file <path>")
    .description("Record a file modification")
    .option("--summary <text>", "what changed")
    .option("--workflow <name>", "the workflow that changed it")
    .option("--session <id>", "this session (default: the current one)")
    .option("--json", "print the session as JSON")
    .action(async (file: string, options, command: Command) => {
      const { result, recorded } = await withLibraryTracker(
        command,
        (tracker) => ({
          result: unwrap(tracker.sessions.recordFile({ path: file, summary: options.summary, workflow: options.workflow }, options.session)),
          recorded: tracker.sessions.recordedPath(file),
        }),
        true,
      );
      if (options.json) return printJson(result);
      // The path as recorded: a secret in it stays out of a hook's log too.
      const entry = result.files_modified?.[recorded];
      printLine(`Recorded ${recorded} in session ${result.session_id} (${entry?.modification_count ?? 1} change(s)).`);
    });
}

/** `reqwatch session snapshot`: update the context snapshot. */
function registerSessionSnapshot(session: Command): void {
  session
    .command("snapshot")
    .description("Update the context snapshot (each option replaces that field; repeat list options)")
    .option("--task <text>", "the active task")
    .option("--done <step>", "a completed step (repeatable)", list)
    .option("--next <step>", "a next step (repeatable)", list)
    .option("--key-file <path>", "a key file (repeatable)", list)
    .option("--blocker <text>", "a blocking issue (repeatable)", list)
    .option("--clear-blockers", "no blocking issues")
    .option("--session <id>", "this session (default: the current one)")
    .option("--json", "print the session as JSON")
    .action(async (options, command: Command) => {
      const result = unwrap(
        await withLibraryTracker(
          command,
          (tracker) =>
            tracker.sessions.updateSnapshot(
              {
                activeTask: options.task,
                completedSteps: options.done,
                nextSteps: options.next,
                keyFiles: options.keyFile,
                blockingIssues: options.clearBlockers ? [] : options.blocker,
              },
              options.session,
            ),
          true,
        ),
      );
      if (options.json) return printJson(result);
      printLine(`Updated the snapshot of session ${result.session_id}.`);
    });
}

/** `reqwatch session show`: a session's context, the folder's, another tool's file, or one received over OpenTelemetry. */
function registerSessionShow(session: Command): void {
  session
    .command("show [id]")
    .description("Show a session's context (default: the current one); --file reads another tool's session file; --source otel one received over OpenTelemetry")
    .option("--file <path>", "a session file in the common session-file shape, e.g. CLAUDE-session-state.json")
    .option(
      "--source <source>",
      "otel: a session received over OpenTelemetry (a Claude Code session.id, a GenAI conversation), as the dashboard kept it (default: the most recently active)",
    )
    .option("--json", "print the session as JSON")
    .action(async (id: string | undefined, options, command: Command) => {
      stopIfTrackingOff();
      const source = parseSessionSource(options.source);
      if (source && options.file) throw new ReqwatchError("BAD_INPUT", "--source and --file name two different sessions: give one.");
      const { reader, upkeep, close } = trackerFor(command);
      try {
        const now = reader.options.now();
        if (source) {
          const received = telemetrySessionsOf(reader);
          const sessionId = id ?? received.list(now, 1)[0]?.sessionId;
          if (!sessionId) throw new ReqwatchError("NOT_FOUND", "No session was received over OpenTelemetry for this state folder.");
          const view = received.get(sessionId, now);
          if (!view) throw new ReqwatchError("NOT_FOUND", `No telemetry received carries session ${sessionId}.`);
          if (options.json) return printJson(view);
          for (const line of telemetrySessionLines(view, now)) printLine(line);
          return;
        }
        let found = options.file ? readSessionFile(options.file, "external") : null;
        if (!options.file) {
          if (!id) upkeep.refreshSessions();
          const sessionId = id ?? reader.sessions.current();
          if (!sessionId) {
            const hint = reader.ownership.access === "managed" ? "; start one with `reqwatch session start`" : " recorded in this folder";
            throw new ReqwatchError("NOT_FOUND", `There is no current session${hint}.`);
          }
          found = reader.sessions.get(sessionId);
          if (!found) throw new ReqwatchError("NOT_FOUND", `Session ${sessionId} does not exist.`);
        }
        if (!found) throw new ReqwatchError("NOT_FOUND", "The session file does not exist.");
        if (options.json) return printJson(found);
        for (const line of sessionSummaryLines(found, now, reader.options.sessionExpiryMs)) printLine(line);
      } finally {
        close();
      }
    });
}

/** `reqwatch session list`: the folder's sessions and the received ones. */
function registerSessionList(session: Command): void {
  session
    .command("list")
    .description("List sessions, most recently active first: the folder's, and those received over OpenTelemetry (as the dashboard's Sessions page)")
    .summary("List sessions, most recently active first")
    .option("--json", "print them as JSON")
    .action(async (options, command: Command) => {
      // With tracking off the list is empty, as every list is: no store is looked at.
      const rows = trackingIsOff()
        ? []
        : await withTracker(command, ({ reader, upkeep }) => {
            // Sessions another process recorded since the index last looked.
            upkeep.refreshSessions();
            return sessionsView(reader, telemetrySessionsOf(reader));
          });
      if (options.json) return printJson(rows);
      printTable(
        ["session", "from", "state", "last activity", "requests", "commands", "files", "task or usage"],
        rows.map((s) => {
          const at = lastActive(s);
          const when = at ? new Date(at).toISOString() : "—";
          return s.source === null
            ? [s.sessionId, "this folder", s.state, when, String(s.requests), String(s.commands), String(s.files), s.activeTask ?? "—"]
            : [s.sessionId, s.from, s.state, when, String(s.requests), "—", "—", telemetrySessionFigures(s)];
        }),
      );
    });
}

/** `reqwatch session reset`: end the current session and start a new one. */
function registerSessionReset(session: Command): void {
  session
    .command("reset")
    .description("End the current session (it is kept) and start a new one")
    .option("--json", "print the outcome as JSON")
    .action(async (options, command: Command) => {
      const outcome = unwrap(await withLibraryTracker(command, (tracker) => tracker.sessions.reset(), true));
      if (options.json) return printJson({ ended: outcome.ended, started: outcome.session.session_id });
      printLine(outcome.ended ? `Ended session ${outcome.ended}; started ${outcome.session.session_id}.` : `Started session ${outcome.session.session_id}.`);
    });
}
