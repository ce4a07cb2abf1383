import type { TelemetrySettings } from "../telemetrySettings";
import { UsageLedger, type UsageFolders } from "./usageLedger";
import { USAGE_AGENTS, type UsageAgent } from "./usageLines";
import { usageReport, type UsageQuery, type UsageReport } from "./usageReport";

/** Each agent's folder to read, as the settings that turn each agent's files on or off say. */
export function usageFolders(settings: Pick<TelemetrySettings, "claudeDir" | "codexDir" | "geminiDir">): UsageFolders {
  return { "claude-code": settings.claudeDir ?? null, codex: settings.codexDir ?? null, gemini: settings.geminiDir ?? null };
}

export interface ReportUsageOptions {
  /** The ledger's file (lib/telemetry/usage/usageLedger.ts usageLedgerFile), or null: read in memory, nothing kept. */
  ledgerFile: string | null;
  folders: UsageFolders;
  query: UsageQuery;
  /** One agent only. */
  agent?: UsageAgent;
}

/** The ledger brought up to date with what the agents' files gained, then the report over it. */
export function reportUsage(options: ReportUsageOptions): UsageReport {
  const agents = USAGE_AGENTS.filter((agent) => options.folders[agent] && (!options.agent || options.agent === agent));
  const ledger = new UsageLedger(options.ledgerFile);
  try {
    ledger.update(Object.fromEntries(agents.map((agent) => [agent, options.folders[agent]])));
    const group = options.query.by === "session" || options.query.by === "project" ? options.query.by : null;
    return usageReport(ledger.slots(group, agents), options.query, agents, ledger.status(agents));
  } finally {
    ledger.close();
  }
}
