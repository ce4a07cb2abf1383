import { escapeControls } from "../model/displayText";
import { formatDuration } from "../model/duration";
import type { SessionRecord } from "../stateFiles/sessionFile";
import { toSessionSummary } from "../db/sessionRows";
import { sessionState } from "./sessionState";
import { plural } from "../model/plural";

/** The "session context" text, in plain words: what `reqwatch session show` prints. Each stored text stays on its line. */
export function sessionSummaryLines(session: SessionRecord, now: number, expiryMs: number): string[] {
  const created = Date.parse(session.created_at ?? "");
  const updated = Date.parse(session.last_updated ?? "");
  const snapshot = session.context_snapshot ?? {};
  const files = Object.entries(session.files_modified ?? {});
  const state = sessionState(toSessionSummary(session), now, expiryMs);
  const lines = [
    `Session ${escapeControls(session.session_id)} (${state}${Number.isFinite(created) ? `, started ${formatDuration(Math.max(0, now - created))} ago` : ""}${Number.isFinite(updated) ? `, updated ${formatDuration(Math.max(0, now - updated))} ago` : ""})`,
    `Current focus: ${snapshot.active_task == null ? "—" : escapeControls(snapshot.active_task)}`,
  ];
  const list = (title: string, items: readonly string[] | undefined) => {
    if (!items?.length) return;
    lines.push(`${title} (${items.length}):`, ...items.map((item) => `  - ${escapeControls(item)}`));
  };
  list("Completed", snapshot.completed_steps);
  if (files.length)
    lines.push(
      `Modified files (${files.length}):`,
      ...files.map(([file, entry]) => `  - ${escapeControls(file)} (${plural(entry.modification_count ?? 0, "change")})`),
    );
  list("Next steps", snapshot.next_steps);
  list("Blocking issues", snapshot.blocking_issues);
  if (session.patterns_detected?.length) lines.push(`Patterns: ${session.patterns_detected.map(escapeControls).join(", ")}`);
  const workflows = Object.entries(session.workflows_used ?? {});
  if (workflows.length) lines.push(`Workflows: ${workflows.map(([name, n]) => `${escapeControls(name)} (${n})`).join(", ")}`);
  lines.push(`Commands: ${session.commands_executed?.length ?? 0}`);
  return lines;
}
