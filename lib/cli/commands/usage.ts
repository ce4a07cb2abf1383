import fs from "node:fs";
import { InvalidArgumentError, Option, type Command } from "commander";
import { formatCost, PRICE_TABLE } from "../../model/money";
import { resolveStateDirPath } from "../../stateFiles/stateDir";
import { telemetrySettings } from "../../telemetry/telemetrySettings";
import { usageLedgerFile } from "../../telemetry/usage/usageLedger";
import { USAGE_AGENTS, type UsageAgent } from "../../telemetry/usage/usageLines";
import { knownTimeZone, machineTimeZone, USAGE_BY, type UsageBy, type UsageReport } from "../../telemetry/usage/usageReport";
import { reportUsage, usageFolders } from "../../telemetry/usage/reportUsage";
import { trackingIsOff, UsageError, withTracker } from "../context";
import { printJson, printLine, printTable } from "../output";

/** A local date, `YYYY-MM-DD` or `YYYYMMDD` (as ccusage takes it), as `YYYY-MM-DD`. */
export function localDate(value: string): string {
  const match = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(value.trim());
  const date = match ? `${match[1]}-${match[2]}-${match[3]}` : "";
  if (!match || Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date) throw new InvalidArgumentError(`"${value}" is not a date. Use YYYY-MM-DD or YYYYMMDD, such as 2026-11-23.`);
  return date;
}

export function timeZone(value: string): string {
  const zone = knownTimeZone(value);
  if (!zone) throw new InvalidArgumentError(`"${value}" is not a time zone. Use an IANA name, such as UTC or Europe/Paris.`);
  return zone;
}

const tokens = (n: number) => n.toLocaleString("en-US");

export function registerUsage(program: Command): void {
  program
    .command("usage")
    .description(
      "Tokens and cost of the model calls in Claude Code's, Codex CLI's and Gemini CLI's own files (the folders the dashboard reads; REQWATCH_AGENT_FILES=off turns them off), by day, month, session, project or model, per agent: the whole history the files hold, kept in a ledger in the state folder (only what the files gained since is read again)",
    )
    .summary("Tokens and cost of the agents' model calls, by day, month, session, project or model")
    .addOption(new Option("--by <grouping>", "day, month, session, project or model").choices(USAGE_BY).default("day"))
    .option("--since <date>", "from this local date (YYYY-MM-DD)", localDate)
    .option("--until <date>", "to this local date, included (YYYY-MM-DD)", localDate)
    .option("--timezone <zone>", "the IANA time zone days and months are in (default: the machine's)", timeZone)
    .addOption(new Option("--agent <agent>", "one agent only").choices(USAGE_AGENTS))
    .option("--json", "print the report as JSON")
    .action(async (options: { by: UsageBy; since?: string; until?: string; timezone?: string; agent?: UsageAgent; json?: boolean }, command: Command) => {
      let settings;
      try {
        settings = telemetrySettings();
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      const query = { by: options.by, timezone: options.timezone ?? machineTimeZone(), since: options.since, until: options.until };
      const { stateDir } = command.optsWithGlobals<{ stateDir?: string }>();
      // With no state folder (or tracking off), the files are read in memory and nothing is kept.
      const keep = !trackingIsOff() && fs.existsSync(resolveStateDirPath(stateDir));
      const ledgerFile = keep ? await withTracker(command, (tracker) => usageLedgerFile(tracker.stateDir.storeDir)) : null;
      const report = reportUsage({ ledgerFile, folders: usageFolders(settings), query, agent: options.agent });
      if (options.json) return printJson(report);
      printUsage(report);
    });
}

function printUsage(report: UsageReport): void {
  if (report.agents.length === 0) return printLine("No agent's files are read (REQWATCH_AGENT_FILES is off).");
  const heading = { day: "Day", month: "Month", session: "Session", project: "Project", model: "Model" }[report.by];
  const cells = (row: UsageReport["totals"]) => [tokens(row.inputTokens), tokens(row.outputTokens), tokens(row.cacheReadTokens), tokens(row.cacheWriteTokens), tokens(row.totalTokens), formatCost(row)];
  const rows: string[][] = [];
  for (const row of report.rows) {
    rows.push([row.period, row.agentsUsed.join(", "), row.modelsUsed.join(", "), ...cells(row)]);
    if (row.agents.length > 1) for (const agent of row.agents) rows.push([`  ${agent.agent}`, "", agent.modelsUsed.join(", "), ...cells(agent)]);
  }
  rows.push(["Total", report.agents.join(", "), "", ...cells(report.totals)]);
  printTable([heading, "Agents", "Models", "Input", "Output", "Cache read", "Cache write", "Total tokens", "Cost"], rows);
  const skipped = report.read.malformed + report.read.oversized;
  printLine(`${report.by === "day" || report.by === "month" ? `Days in ${report.timezone}. ` : ""}Costs as the agent wrote them, else "estimated" at list prices (${PRICE_TABLE.name} ${PRICE_TABLE.version}, published ${PRICE_TABLE.publishedOn}); "unpriced": a model that table does not know.${skipped > 0 ? ` ${skipped} line(s) skipped (${report.read.malformed} not JSON, ${report.read.oversized} too long).` : ""}`);
}
