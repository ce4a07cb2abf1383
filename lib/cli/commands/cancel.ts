import type { Command } from "commander";
import { requireAllChanged, stopIfTrackingOff, withFreshTracker } from "../context";
import { printJson, printLine, printObservedNote } from "../output";
import { storeUrlOf, withSharedStore } from "../sharedStore";
import { cancelShared } from "../../postgres/personActions";

export function registerCancel(program: Command): void {
  program
    .command("cancel <requestIds...>")
    .description("Cancel created, queued or processing requests: they go to failed, reason cancelled (a worker's late result is dropped)")
    .summary("Cancel waiting or running requests")
    .option("--dry-run", "only report what would change")
    .option("--json", "print the report as JSON")
    .action(async (requestIds: string[], options, command: Command) => {
      stopIfTrackingOff();
      const store = storeUrlOf(command);
      const { report, ownership } = store
        ? await withSharedStore(store, async (shared) => ({
            report: await cancelShared(shared, requestIds, { dryRun: !!options.dryRun, by: "cli" }),
            ownership: null,
          }))
        : await withFreshTracker(
            command,
            ({ operator }) => ({ report: operator.cancel(requestIds, { dryRun: !!options.dryRun, by: "cli" }), ownership: operator.ownership }),
            requestIds,
          );
      if (options.json) {
        printJson(report);
        return requireAllChanged(new Set(requestIds).size, report.cancelled.length, report.dryRun, "cancelled");
      }
      printLine(`${report.dryRun ? "Would cancel" : "Cancelled"} ${report.cancelled.length} of ${report.matched} request(s).`);
      for (const item of report.cancelled) printLine(`  ${item.requestId}  ${item.from} -> failed`);
      for (const item of report.skipped) printLine(`  skipped ${item.requestId}: ${item.reason}`);
      if (ownership) printObservedNote(ownership);
      requireAllChanged(new Set(requestIds).size, report.cancelled.length, report.dryRun, "cancelled");
    });
}
