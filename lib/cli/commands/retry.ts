import type { Command } from "commander";
import type { State } from "../../model/states";
import { requireAllChanged, stopIfTrackingOff, withFreshTracker } from "../context";
import { printJson, printLine, printObservedNote } from "../output";
import { states } from "../parse";

export function registerRetry(program: Command): void {
  program
    .command("retry [requestIds...]")
    .description("Send failed, timed-out or orphaned requests back to the queue (ids, or --state / --workspace)")
    .summary("Send requests back to the queue")
    .option("-s, --state <states>", "every request in these states (comma-separated)", states)
    .option("-w, --workspace <name>", "only this workspace (with --state)")
    .option("--dry-run", "only report what would change")
    .option("--json", "print the report as JSON")
    .action(async (requestIds: string[], options, command: Command) => {
      stopIfTrackingOff();
      if (!requestIds.length && !options.state) command.error("error: give request ids, or --state to retry by filter", { exitCode: 2 });
      if (requestIds.length && (options.state || options.workspace)) command.error("error: give request ids or --state/--workspace, not both", { exitCode: 2 });
      const target = requestIds.length
        ? { ids: requestIds }
        : { filter: { states: options.state as State[], ...(options.workspace && { workspace: options.workspace }) } };
      const { report, ownership } = await withFreshTracker(command, (tracker) => ({ report: tracker.retry(target, { dryRun: !!options.dryRun, by: "cli" }), ownership: tracker.ownership }), requestIds.length ? requestIds : undefined);
      if (options.json) {
        printJson(report);
        return requireAllChanged(new Set(requestIds).size, report.retried.length, report.dryRun, "retried");
      }
      printLine(`${report.dryRun ? "Would retry" : "Retried"} ${report.retried.length} of ${report.matched} request(s).`);
      for (const item of report.retried) printLine(`  ${item.requestId}  ${item.from} -> queued  (${item.reason})`);
      for (const item of report.skipped) printLine(`  skipped ${item.requestId}: ${item.reason}`);
      printObservedNote(ownership);
      requireAllChanged(new Set(requestIds).size, report.retried.length, report.dryRun, "retried");
    });
}
