import type { Command } from "commander";
import { formatDuration } from "../../model/duration";
import { TERMINAL_STATES } from "../../model/states";
import { stopIfTrackingOff, withFreshTracker } from "../context";
import { printJson, printLine, printObservedNote } from "../output";
import { duration, states } from "../parse";

export function registerCleanup(program: Command): void {
  program
    .command("cleanup")
    .description("Archive, then delete, requests not updated for a while (terminal states by default)")
    .summary("Archive, then delete, old finished requests")
    .option("--older-than <duration>", "not updated for this long (default 24h)", duration)
    .option("-s, --state <states>", `states to clean up (default ${TERMINAL_STATES.join(",")})`, states)
    .option("--dry-run", "only report what would go")
    .option("--json", "print the report as JSON")
    .action(async (options, command: Command) => {
      stopIfTrackingOff();
      const { report, ownership } = await withFreshTracker(command, ({ operator }) => ({
        report: operator.cleanup({
          ...(options.olderThan !== undefined && { olderThanMs: options.olderThan }),
          ...(options.state !== undefined && { states: options.state }),
          dryRun: !!options.dryRun,
        }),
        ownership: operator.ownership,
      }));
      if (options.json) return printJson(report);
      const states =
        Object.entries(report.byState)
          .map(([state, n]) => `${n} ${state}`)
          .join(", ") || "none";
      const age = formatDuration(Date.now() - report.cutoff);
      if (report.dryRun) {
        printLine(`Would archive and delete ${report.matched} request(s) not updated for ${age} (${states}).`);
        if (report.ids.length) printLine(`First: ${report.ids.slice(0, 10).join(", ")}${report.ids.length > 10 ? ", ..." : ""}`);
        printObservedNote(ownership);
        return;
      }
      printLine(`Archived and deleted ${report.archived} of ${report.matched} request(s) not updated for ${age} (${states}).`);
      for (const skip of report.skipped) printLine(`Skipped ${skip.requestId}: ${skip.reason}`);
      if (report.archived) printLine("Undo one with: reqwatch restore <id>");
    });
}
