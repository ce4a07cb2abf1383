// What a session's figures read as, wherever they are shown (the Sessions page, `reqwatch session`, MCP); pure, so the browser shows the same words.
import { formatCost, type CallCosts } from "../model/money";
import { plural } from "../model/plural";

interface ReceivedFigures extends CallCosts {
  turns: number;
  tools: number;
  inputTokens: number;
  outputTokens: number;
  stuck: number;
}

/** What a received session did: its turns (a Claude Code session's), model calls and tool uses. */
export function receivedActivity(row: Pick<ReceivedFigures, "turns" | "calls" | "tools">): string {
  return [row.turns > 0 && plural(row.turns, "turn"), plural(row.calls, "model call"), plural(row.tools, "tool use")].filter(Boolean).join(", ");
}

/** A received session's figures in one line: what the CLI's list says of it. */
export function telemetrySessionFigures(row: ReceivedFigures): string {
  return [
    receivedActivity(row),
    `${row.inputTokens.toLocaleString("en-US")} in / ${row.outputTokens.toLocaleString("en-US")} out tokens`,
    formatCost(row),
    row.stuck > 0 && `${row.stuck} stuck`,
  ]
    .filter(Boolean)
    .join(", ");
}
