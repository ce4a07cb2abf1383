import { z } from "zod";
import { readSmallJson } from "../fs/readSmallJson";
import { ReqwatchError } from "../model/errors";
import { REQUEST_ID_PATTERN } from "../model/ids";
import { lazily } from "../model/lazily";

/**
 * The session state file: the shape agent session trackers already write (snake_case, ISO times), so a file written by
 * that tool (`CLAUDE-session-state.json`) loads here and one written here loads there. Read
 * leniently: every field may be missing, unknown fields are kept on rewrite.
 */
const iso = () => z.string();
const commandSchema = lazily(() =>
  z.looseObject({
    timestamp: iso().optional(),
    command: z.string().optional(),
    workflow: z.string().optional(),
    duration_seconds: z.number().nonnegative().optional(),
    status: z.string().optional(),
  }),
);
const fileEntrySchema = lazily(() =>
  z.looseObject({
    first_modified: iso().optional(),
    last_modified: iso().optional(),
    modification_count: z.number().int().nonnegative().optional(),
    changes_summary: z.string().optional(),
    workflows: z.array(z.string()).optional(),
  }),
);
const snapshotSchema = lazily(() =>
  z.looseObject({
    active_task: z.string().nullable().optional(),
    completed_steps: z.array(z.string()).optional(),
    next_steps: z.array(z.string()).optional(),
    key_files: z.array(z.string()).optional(),
    blocking_issues: z.array(z.string()).optional(),
  }),
);
const sessionSchema = lazily(() =>
  z.looseObject({
    session_id: z.string().regex(REQUEST_ID_PATTERN, "must be 1 to 128 letters, digits, _ or -"),
    created_at: iso().optional(),
    last_updated: iso().optional(),
    /** reqwatch's own: set by reset; an ended session is never the current one again. */
    ended_at: iso().optional(),
    commands_executed: z.array(commandSchema()).optional(),
    files_modified: z.record(z.string(), fileEntrySchema()).optional(),
    patterns_detected: z.array(z.string()).optional(),
    workflows_used: z.record(z.string(), z.number()).optional(),
    context_snapshot: snapshotSchema().optional(),
    statistics: z.record(z.string(), z.unknown()).optional(),
  }),
);

export type SessionRecord = z.infer<ReturnType<typeof sessionSchema>>;
export type CommandEntry = z.infer<ReturnType<typeof commandSchema>>;
export type ContextSnapshot = z.infer<ReturnType<typeof snapshotSchema>>;

/** Files over this size are reported, not parsed (session files are typically under 50 KB). */
const MAX_SESSION_BYTES = 16 * 1024 * 1024;

/**
 * Read a session file; null when there is none. A file that cannot be read or is not a session
 * throws CORRUPT_FILE with a one-line reason, and is left as it is.
 */
export function readSessionFile(file: string, expectedId?: string): SessionRecord | null {
  const read = readSmallJson(file, { maxBytes: MAX_SESSION_BYTES, links: "refuse" });
  if ("missing" in read) return null;
  if ("problem" in read) {
    const reason = read.reason === "empty" ? "empty file" : read.reason === "not json" ? "invalid JSON" : read.problem;
    throw new ReqwatchError("CORRUPT_FILE", "Unreadable session file.", { reason });
  }
  let raw = read.value;
  // Another tool's file may lack its id (one file per tool, at a fixed path): take the expected one.
  if (raw && typeof raw === "object" && !Array.isArray(raw) && (raw as Record<string, unknown>).session_id === undefined && expectedId) {
    raw = { ...(raw as object), session_id: expectedId };
  }
  const parsed = sessionSchema().safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ReqwatchError("CORRUPT_FILE", "Unreadable session file.", {
      reason: `not a session: ${issue?.path.join(".") || "the file"} ${issue?.message ?? ""}`.trim(),
    });
  }
  if (expectedId && parsed.data.session_id !== expectedId) {
    throw new ReqwatchError("CORRUPT_FILE", "Unreadable session file.", { reason: `its session_id is ${parsed.data.session_id}, not ${expectedId}` });
  }
  return parsed.data;
}

/** Pretty-printed, as session trackers write it. */
export function serializeSession(session: SessionRecord): string {
  return `${JSON.stringify(session, null, 2)}\n`;
}
