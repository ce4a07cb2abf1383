import path from "node:path";
import { ensureOwnFolder } from "../ownFolder";
import { telemetryStoreDir, type TelemetrySettings } from "../telemetrySettings";
import { UsageLedger, usageLedgerFile, type UsageFolders } from "./usageLedger";
import { USAGE_AGENTS, type UsageAgent } from "./usageLines";
import { usageReport, type UsageQuery, type UsageReport } from "./usageReport";

/** Each agent's folder to read, as the settings that turn each agent's files on or off say. */
export function usageFolders(settings: Pick<TelemetrySettings, "claudeDir" | "codexDir" | "geminiDir">): UsageFolders {
  return { "claude-code": settings.claudeDir ?? null, codex: settings.codexDir ?? null, gemini: settings.geminiDir ?? null };
}

/**
 * The ledger's file, beside the received telemetry's store: the user's one (made private to them,
 * as the dashboard makes it), else the state folder's store folder.
 */
export function usageLedgerAt(settings: Pick<TelemetrySettings, "dir">, storeDir: string): string {
  if (settings.dir) ensureOwnFolder(settings.dir);
  return usageLedgerFile(telemetryStoreDir(settings, storeDir));
}

interface ReportUsageOptions {
  /** The ledger's file (lib/telemetry/usage/usageLedger.ts usageLedgerFile), or null: read in memory, nothing kept. */
  ledgerFile: string | null;
  folders: UsageFolders;
  query: UsageQuery;
  /** One agent only. */
  agent?: UsageAgent;
}

/** The ledger brought up to date with what the agents' files gained, then the report over it. */
export async function reportUsage(options: ReportUsageOptions): Promise<UsageReport> {
  const agents = USAGE_AGENTS.filter((agent) => options.folders[agent] && (!options.agent || options.agent === agent));
  const folders: UsageFolders = Object.fromEntries(agents.map((agent) => [agent, path.resolve(options.folders[agent]!)]));
  const ledger = new UsageLedger(options.ledgerFile);
  try {
    await ledger.update(folders);
    const group = options.query.by === "session" || options.query.by === "project" ? options.query.by : null;
    return usageReport(ledger.slots(group, folders), options.query, agents, ledger.status(folders));
  } finally {
    ledger.close();
  }
}
