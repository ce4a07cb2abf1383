import { randomUUID } from "../process/crypto";
import fs from "node:fs";
import path from "node:path";
import { withWritersLock } from "../db/writeLock";
import type { TrackerContext } from "../store/context";
import { asReqwatchError, ReqwatchError, isReqwatchError } from "../model/errors";
import { writeFileDurable } from "../fs/durableWrite";
import { assertRequestId, idOfFileName } from "../model/ids";
import { assertManaged } from "../store/ownership";
import { forgetUnreadable, recordUnreadable } from "../db/unreadableFiles";
import { addPatterns, areaOfPath, deriveStatistics, patternsOfCommand } from "./derive";
import { readSessionFile, serializeSession, type CommandEntry, type ContextSnapshot, type SessionRecord } from "../stateFiles/sessionFile";
import type { SessionSummary } from "../db/changes";
import { redactField, type RedactField } from "../model/redaction";
import { anySession, currentSessionId, indexedSessionIds, listSessions, removeSession, upsertSession } from "../db/sessionRows";
import type { SessionResult, CommandInput, FileInput, SnapshotInput, StartOutcome, SessionTracker } from "../types";
import { COMMAND_STATUSES } from "../model/commandStatus";

const isoAt = (ms: number) => new Date(ms).toISOString();

function result<T>(run: () => T): SessionResult<T> {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    const failure = asReqwatchError(error);
    return { ok: false, error: { code: failure.code, message: failure.message } };
  }
}

/** A session with nothing recorded yet. */
export function blankSession(sessionId: string, now: number): SessionRecord {
  const at = isoAt(now);
  return {
    session_id: sessionId,
    created_at: at,
    last_updated: at,
    commands_executed: [],
    files_modified: {},
    patterns_detected: [],
    workflows_used: {},
    context_snapshot: { active_task: null, completed_steps: [], next_steps: [], key_files: [], blocking_issues: [] },
    statistics: {},
  };
}

/** The session tracker as reqwatch's own programs use it (the reader's sessions, the upkeep's `refreshSessions`): the sessions list, and the index kept in line with the files. */
export interface SessionService extends SessionTracker {
  /** The sessions the index holds, most recently updated first. */
  list(limit?: number): SessionSummary[];
  /** Bring the session index in line with sessions/ (recovery, and the watcher for one file). */
  /** `feed: false` in a rebuild (every client resets at the new generation): no change per session. Default: true, or false in a rebuild's context. */
  reconcile(ids?: readonly string[], options?: { feed?: boolean }): { fixes: number; unreadable: { file: string; reason: string }[] };
}

/**
 * The session tracker on the state directory: `sessions/<id>.json` in the common session-file shape,
 * written through the durable path under the writers' lock, indexed, and in the change feed.
 */
export class Sessions implements SessionService {
  readonly #ctx: TrackerContext;

  constructor(ctx: TrackerContext) {
    this.#ctx = ctx;
  }

  /** What a session records is redacted before it is written (lib/model/redaction.ts). */
  #redact(field: RedactField, text: string): string {
    return redactField(this.#ctx.options.redaction, field, text);
  }

  #file(sessionId: string): string {
    // The same pattern as request ids (they become file names too), named as what they are.
    assertRequestId(sessionId, "session id");
    return path.join(this.#ctx.dir.sessionsDir, `${sessionId}.json`);
  }

  #write(session: SessionRecord): SessionRecord {
    assertManaged(this.#ctx, "Recording a session");
    const next = { ...session, last_updated: isoAt(this.#ctx.now()) };
    next.statistics = { ...(session.statistics ?? {}), ...deriveStatistics(next) };
    writeFileDurable(this.#file(next.session_id), serializeSession(next));
    upsertSession(this.#ctx.db, next);
    return next;
  }

  /**
   * Read, change and write one session under the writers' lock. A session named but not recorded
   * yet (requests may carry its id) is recorded from now; an unreadable file is an error (the file is kept).
   */
  #change(sessionId: string, mutate: (session: SessionRecord) => SessionRecord): SessionRecord {
    return withWritersLock(this.#ctx, () => this.#write(mutate(this.#read(sessionId) ?? this.#blank(sessionId))));
  }

  #read(sessionId: string): SessionRecord | null {
    try {
      return readSessionFile(this.#file(sessionId), sessionId);
    } catch (error) {
      if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
      throw new ReqwatchError("CORRUPT_FILE", `Session ${sessionId} cannot be read (${String(error.details?.reason)}); it was left as it is.`, error.details);
    }
  }

  #recordUnreadable(sessionId: string, reason: string): void {
    recordUnreadable(this.#ctx.db, sessionFileKey(sessionId), reason, null, this.#ctx.now());
  }

  #create(): SessionRecord {
    return this.#write(this.#blank(randomUUID()));
  }

  #blank(sessionId: string): SessionRecord {
    return blankSession(sessionId, this.#ctx.now());
  }

  /** The current session's id: the newest not ended and updated within the expiry (null when there is none). */
  current(): string | null {
    return currentSessionId(this.#ctx.db, this.#ctx.now() - this.#ctx.options.sessionExpiryMs);
  }

  /** Continue the session updated within the expiry window, else start a new one with a fresh id. */
  start(): SessionResult<StartOutcome> {
    return result(() =>
      withWritersLock(this.#ctx, () => {
        const currentId = this.current();
        if (currentId) {
          try {
            const session = this.#read(currentId);
            if (session) return { session, started: false, reason: "continued" as const };
          } catch (error) {
            // A corrupt current session is reported and kept; work goes on in a new one.
            if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
            this.#recordUnreadable(currentId, String(error.details?.reason ?? error.message));
            return { session: this.#create(), started: true, reason: "unreadable" as const };
          }
        }
        const anyBefore = anySession(this.#ctx.db);
        return { session: this.#create(), started: true, reason: anyBefore ? ("expired" as const) : ("none" as const) };
      }),
    );
  }

  #target(sessionId: string | undefined): string {
    if (sessionId) return sessionId;
    const started = this.start();
    if (!started.ok) throw new ReqwatchError(started.error.code, started.error.message);
    return started.value.session.session_id;
  }

  /** Append a command; its workflow is counted and its words become patterns. */
  recordCommand(input: CommandInput, sessionId?: string): SessionResult {
    return result(() => {
      if (!input.command?.trim()) throw new ReqwatchError("BAD_INPUT", "A command needs its text.");
      if (!COMMAND_STATUSES.includes(input.status))
        throw new ReqwatchError("BAD_INPUT", `Invalid status "${input.status}": use ${COMMAND_STATUSES.join(", ")}.`);
      if (input.durationSeconds !== undefined && !(input.durationSeconds >= 0)) throw new ReqwatchError("BAD_INPUT", "A duration is 0 or more seconds.");
      const command = this.#redact("command", input.command);
      const id = this.#target(sessionId);
      return this.#change(id, (session) => {
        const duration = input.durationSeconds ?? 0;
        const entry: CommandEntry = {
          timestamp: isoAt(input.startedAt ?? this.#ctx.now() - duration * 1000),
          command,
          ...(input.workflow && { workflow: input.workflow }),
          duration_seconds: duration,
          status: input.status,
        };
        const workflows = { ...(session.workflows_used ?? {}) };
        if (input.workflow) workflows[input.workflow] = (workflows[input.workflow] ?? 0) + 1;
        return {
          ...session,
          commands_executed: [...(session.commands_executed ?? []), entry],
          workflows_used: workflows,
          patterns_detected: addPatterns(session.patterns_detected ?? [], patternsOfCommand(command)),
        };
      });
    });
  }

  /** Record a file modification: count, first and last time, summaries joined, workflows kept. */
  recordedPath(path: string): string {
    // A path can hold a secret too (`keys/ghp_....txt`): it goes with the summaries' setting.
    return this.#redact("fileSummary", path);
  }

  recordFile(input: FileInput, sessionId?: string): SessionResult {
    return result(() => {
      if (!input.path?.trim()) throw new ReqwatchError("BAD_INPUT", "A file modification needs the file's path.");
      const given = input.summary && this.#redact("fileSummary", input.summary);
      const filePath = this.recordedPath(input.path);
      const id = this.#target(sessionId);
      return this.#change(id, (session) => {
        const now = isoAt(this.#ctx.now());
        const files = { ...(session.files_modified ?? {}) };
        const before = files[filePath];
        const workflows = [...(before?.workflows ?? [])];
        if (input.workflow && !workflows.includes(input.workflow)) workflows.push(input.workflow);
        const summary = [before?.changes_summary, given].filter(Boolean).join(", ");
        files[filePath] = {
          ...before,
          first_modified: before?.first_modified ?? now,
          last_modified: now,
          modification_count: (before?.modification_count ?? 0) + 1,
          changes_summary: summary,
          workflows,
        };
        return { ...session, files_modified: files, patterns_detected: addPatterns(session.patterns_detected ?? [], [areaOfPath(filePath)]) };
      });
    });
  }

  /** Update the context snapshot: the fields given replace theirs, the rest stay. */
  updateSnapshot(input: SnapshotInput, sessionId?: string): SessionResult {
    return result(() => {
      const each = (field: RedactField, items: string[] | undefined) => items?.map((item) => this.#redact(field, item));
      const given = {
        activeTask: typeof input.activeTask === "string" ? this.#redact("snapshot", input.activeTask) : input.activeTask,
        completedSteps: each("snapshot", input.completedSteps),
        nextSteps: each("snapshot", input.nextSteps),
        keyFiles: each("snapshot", input.keyFiles),
        blockingIssues: each("blockers", input.blockingIssues),
      };
      const id = this.#target(sessionId);
      return this.#change(id, (session) => {
        const snapshot: ContextSnapshot = { ...(session.context_snapshot ?? {}) };
        if (given.activeTask !== undefined) snapshot.active_task = given.activeTask;
        if (given.completedSteps) snapshot.completed_steps = given.completedSteps;
        if (given.nextSteps) snapshot.next_steps = given.nextSteps;
        if (given.keyFiles) snapshot.key_files = given.keyFiles;
        if (given.blockingIssues) snapshot.blocking_issues = given.blockingIssues;
        return { ...session, context_snapshot: snapshot };
      });
    });
  }

  /** End the current session (kept, marked ended) and start a new one. */
  reset(): SessionResult<{ ended: string | null; session: SessionRecord }> {
    return result(() =>
      withWritersLock(this.#ctx, () => {
        const currentId = this.current();
        let ended: string | null = null;
        if (currentId) {
          try {
            const current = this.#read(currentId);
            if (current) {
              this.#write({ ...current, ended_at: isoAt(this.#ctx.now()) });
              ended = currentId;
            }
          } catch (error) {
            if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
          }
        }
        return { ended, session: this.#create() };
      }),
    );
  }

  get(sessionId: string): SessionRecord | null {
    return this.#read(sessionId);
  }

  list(limit?: number): SessionSummary[] {
    return listSessions(this.#ctx.db, limit);
  }

  reconcile(
    ids?: readonly string[],
    { feed = !this.#ctx.rebuilding }: { feed?: boolean } = {},
  ): { fixes: number; unreadable: { file: string; reason: string }[] } {
    const unreadable: { file: string; reason: string }[] = [];
    let fixes = 0;
    withWritersLock(this.#ctx, () => {
      const onDisk = ids ?? sessionIdsIn(this.#ctx.dir.sessionsDir);
      for (const id of onDisk) {
        try {
          const session = readSessionFile(this.#file(id), id);
          if (!session) removeSession(this.#ctx.db, id);
          else if (upsertSession(this.#ctx.db, session, { feed })) fixes++;
          forgetUnreadable(this.#ctx.db, sessionFileKey(id));
        } catch (error) {
          if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
          const reason = String(error.details?.reason ?? error.message);
          this.#recordUnreadable(id, reason);
          unreadable.push({ file: sessionFileKey(id), reason });
        }
      }
      if (!ids) {
        const present = new Set(onDisk);
        for (const id of indexedSessionIds(this.#ctx.db)) {
          if (!present.has(id)) {
            removeSession(this.#ctx.db, id);
            fixes++;
          }
        }
      }
    });
    return { fixes, unreadable };
  }
}

/** How session files are named in `unreadable_files` and reports: relative to the state directory. */
function sessionFileKey(sessionId: string): string {
  return `sessions/${sessionId}.json`;
}

/** Session ids of the files in sessions/ (temp files and other names are not sessions). */
function sessionIdsIn(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return names.map(idOfFileName).filter((id): id is string => id !== null);
}
