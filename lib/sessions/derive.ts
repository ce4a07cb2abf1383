import type { SessionRecord } from "../stateFiles/sessionFile";
import { REDACTION_MARKERS } from "../model/redaction";

/**
 * Patterns, by one deterministic rule: the words of a command (lower-cased runs of letters,
 * digits and hyphens) of at least 4 characters that are not in STOPWORDS, then, for each file
 * path, its working area (`area:` and the first two folders, e.g. `area:src/auth`). Deduplicated,
 * in the order first seen, at most MAX_PATTERNS.
 */
const STOPWORDS = new Set(
  "this that with from into onto have has been were will would should could about after before them then than there their these those when where which while what your yours just also only some more most very make made does done doing over under again each both other such same fix add adds added update updated change changed create created remove removed file files code".split(
    " ",
  ),
);
const MAX_PATTERNS = 50;

export function patternsOfCommand(command: string): string[] {
  // A redacted secret's marker says what was there, not what the session worked on.
  const words =
    command
      .replace(REDACTION_MARKERS, " ")
      .toLowerCase()
      .match(/[a-z0-9][a-z0-9-]*[a-z0-9]/g) ?? [];
  return words.filter((word) => word.length >= 4 && !STOPWORDS.has(word) && !/^\d+$/.test(word));
}

export function areaOfPath(file: string): string | null {
  const folders = file
    .replace(/\\/g, "/")
    .split("/")
    .filter((part) => part && part !== ".")
    .slice(0, -1);
  return folders.length ? `area:${folders.slice(0, 2).join("/")}` : null;
}

export function addPatterns(existing: readonly string[], found: readonly (string | null)[]): string[] {
  const out = [...existing];
  for (const pattern of found) if (pattern && !out.includes(pattern) && out.length < MAX_PATTERNS) out.push(pattern);
  return out;
}

/** Statistics are derived from the session on every write, never edited by hand. */
export function deriveStatistics(session: SessionRecord): Record<string, number> {
  const commands = session.commands_executed ?? [];
  const created = Date.parse(session.created_at ?? "");
  const updated = Date.parse(session.last_updated ?? "");
  const byStatus = (status: string) => commands.filter((c) => c.status === status).length;
  return {
    total_commands: commands.length,
    total_files_modified: Object.keys(session.files_modified ?? {}).length,
    total_workflows: Object.keys(session.workflows_used ?? {}).length,
    session_duration_minutes: Number.isFinite(created) && Number.isFinite(updated) ? Math.max(0, Math.round((updated - created) / 60_000)) : 0,
    commands_completed: byStatus("completed"),
    commands_partial: byStatus("partial"),
    commands_failed: byStatus("failed"),
  };
}
