import { formatCost, PRICE_TABLE } from "../model/money";
import type { UsageAgent } from "../telemetry/usage/usageLines";
import type { UsageBy, UsageReport, UsageSumsRow } from "../telemetry/usage/usageReport";

/**
 * The usage report as a table, the same cells on the Usage page and in `reqwatch usage`: a row per
 * day, month, session, project or model, its agents' rows under it when it has more than one.
 */

export const AGENT_NAMES: Record<UsageAgent, string> = { "claude-code": "Claude Code", codex: "Codex CLI", gemini: "Gemini CLI" };
export const BY_HEADINGS: Record<UsageBy, string> = { day: "Day", month: "Month", session: "Session", project: "Project", model: "Model" };
export const USAGE_COLUMNS = ["Input", "Output", "Cache read", "Cache write", "Total tokens", "Cost"] as const;

const tokens = (n: number) => n.toLocaleString("en-US");

/** A row's figures, in USAGE_COLUMNS' order. */
export const usageCells = (row: UsageSumsRow): string[] => [
  tokens(row.inputTokens),
  tokens(row.outputTokens),
  tokens(row.cacheReadTokens),
  tokens(row.cacheWriteTokens),
  tokens(row.totalTokens),
  formatCost(row),
];

interface UsageTableRow {
  /** The day, month, session, project or model; an agent's row under it: the agent's name. */
  label: string;
  /** An agent's row under its period's. */
  agentRow: boolean;
  agents: string;
  models: string;
  cells: string[];
}

export function usageTable(report: UsageReport): UsageTableRow[] {
  const rows: UsageTableRow[] = [];
  for (const row of report.rows) {
    rows.push({
      label: row.period,
      agentRow: false,
      agents: row.agentsUsed.map((agent) => AGENT_NAMES[agent]).join(", "),
      models: row.modelsUsed.join(", "),
      cells: usageCells(row),
    });
    if (row.agents.length > 1)
      for (const agent of row.agents)
        rows.push({ label: AGENT_NAMES[agent.agent], agentRow: true, agents: "", models: agent.modelsUsed.join(", "), cells: usageCells(agent) });
  }
  return rows;
}

/** What the figures rest on, in a sentence under the table. */
export function usageNote(report: UsageReport): string {
  const skipped = report.read.malformed + report.read.oversized;
  return [
    report.by === "day" ? `Days in ${report.timezone}.` : report.by === "month" ? `Months in ${report.timezone}.` : "",
    `Costs as the agent wrote them, else "estimated" at list prices (${PRICE_TABLE.name} ${PRICE_TABLE.version}, published ${PRICE_TABLE.publishedOn}); "unpriced": a model that table does not know.`,
    skipped > 0 ? `${skipped} line(s) skipped (${report.read.malformed} not JSON, ${report.read.oversized} too long).` : "",
  ]
    .filter(Boolean)
    .join(" ");
}
