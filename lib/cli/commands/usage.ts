import fs from "node:fs";
import path from "node:path";
import { InvalidArgumentError, Option, type Command } from "commander";
import { resolveStateDirPath } from "../../stateFiles/stateDir";
import { defaultCacheDir } from "../../fs/cacheDir";
import { telemetrySettings } from "../../telemetry/telemetrySettings";
import { usageLedgerFile, type UsageFolders } from "../../telemetry/usage/usageLedger";
import { USAGE_AGENTS, type UsageAgent } from "../../telemetry/usage/usageLines";
import { knownTimeZone, machineTimeZone, USAGE_BY, type UsageBy, type UsageReport } from "../../telemetry/usage/usageReport";
import { reportUsage, usageFolders, usageLedgerAt } from "../../telemetry/usage/reportUsage";
import { AGENT_NAMES, BY_HEADINGS, USAGE_COLUMNS, usageCells, usageNote, usageTable } from "../../views/usageView";
import { storeDirOf, trackingIsOff, UsageError } from "../context";
import { printJson, printLine, printTable } from "../output";

/** A setting refused (a folder not the user's own) is a usage error, naming it. */
function asUsage<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A local date, `YYYY-MM-DD` or `YYYYMMDD` (as ccusage takes it), as `YYYY-MM-DD`. */
function localDate(value: string): string {
  const match = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(value.trim());
  const date = match ? `${match[1]}-${match[2]}-${match[3]}` : "";
  if (!match || Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date)
    throw new InvalidArgumentError(`"${value}" is not a date. Use YYYY-MM-DD or YYYYMMDD, such as 2026-11-23.`);
  return date;
}

export function timeZone(value: string): string {
  const zone = knownTimeZone(value);
  if (!zone) throw new InvalidArgumentError(`"${value}" is not a time zone. Use an IANA name, such as UTC or Europe/Paris.`);
  return zone;
}

export function registerUsage(program: Command): void {
  program
    .command("usage")
    .description(
      "Tokens and cost of the model calls in Claude Code's, Codex CLI's and Gemini CLI's own files (the folders the dashboard reads; REQWATCH_AGENT_FILES=off turns them off), by day, month, session, project or model, per agent: the whole history the files hold, kept in a ledger beside the received telemetry's store, in reqwatch's cache folder unless REQWATCH_TELEMETRY_DIR says otherwise (only what the files gained since is read again)",
    )
    .summary("Tokens and cost of the agents' model calls")
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
      // The ledger beside the received telemetry's store (the user's one; with REQWATCH_TELEMETRY_DIR=state-folder, the state
      // folder's, and with no state folder, in reqwatch's cache folder); with tracking off, in memory: nothing is kept.
      const ledgerFile = trackingIsOff()
        ? null
        : settings.dir
          ? asUsage(() => usageLedgerAt(settings, ""))
          : fs.existsSync(resolveStateDirPath(stateDir))
            ? usageLedgerFile(storeDirOf(command))
            : usageLedgerFile(path.join(defaultCacheDir(), "usage"));
      const folders = usageFolders(settings);
      const report = await reportUsage({ ledgerFile, folders, query, agent: options.agent });
      if (options.json) return printJson(report);
      printUsage(report, folders);
    });
}

function printUsage(report: UsageReport, folders: UsageFolders): void {
  if (report.agents.length === 0) return printLine("No agent's files are read (REQWATCH_AGENT_FILES is off).");
  // Nothing found at all, rather than a table of zeros: where it looked.
  if (report.rows.length === 0 && report.read.files === 0) {
    const looked = report.agents.map((agent) => `${AGENT_NAMES[agent]} (${folders[agent] ?? "off"})`).join(", ");
    return printLine(`No session files found: looked for ${looked}.`);
  }
  const rows = usageTable(report).map((row) => [row.agentRow ? `  ${row.label}` : row.label, row.agents, row.models, ...row.cells]);
  rows.push(["Total", report.agents.map((agent) => AGENT_NAMES[agent]).join(", "), "", ...usageCells(report.totals)]);
  printTable([BY_HEADINGS[report.by], "Agents", "Models", ...USAGE_COLUMNS], rows);
  printLine(usageNote(report));
}
