import type { Command } from "commander";
import type { State } from "../../model/states";
import { requireAllChanged, stopIfTrackingOff, UsageError, withFreshTracker } from "../context";
import { checkRetryTarget } from "../../queue/retry";
import { printJson, printLine, printObservedNote } from "../output";
import { states } from "../parse";
import { storeUrlOf, withSharedStore } from "../sharedStore";
import { retryShared } from "../../postgres/personActions";

export function registerRetry(program: Command): void {
  program
    .command("retry [requestIds...]")
    .description("Send failed, timed-out, or processing requests whose worker is gone, back to the queue (ids, or --state / --workspace)")
    .summary("Send requests back to the queue")
    .option("-s, --state <states>", "every request in these states (comma-separated)", states)
    .option("-w, --workspace <name>", "every request in this workspace (with --state: only those states)")
    .option("--dry-run", "only report what would change")
    .option("--json", "print the report as JSON")
    .action(async (requestIds: string[], options, command: Command) => {
      stopIfTrackingOff();
      const filtered = options.state || options.workspace;
      const target = {
        ...(requestIds.length && { ids: requestIds }),
        ...(filtered && { filter: { states: options.state as State[] | undefined, ...(options.workspace && { workspace: options.workspace }) } }),
      };
      try {
        checkRetryTarget(target);
      } catch (error) {
        // Refused before anything opens, as a wrong flag is: exit 2.
        throw new UsageError((error as Error).message);
      }
      const store = storeUrlOf(command);
      const { report, ownership } = store
        ? await withSharedStore(store, async (shared) => ({
            report: await retryShared(shared, target, { dryRun: !!options.dryRun, by: "cli" }),
            ownership: null,
          }))
        : await withFreshTracker(
            command,
            ({ operator }) => ({ report: operator.retry(target, { dryRun: !!options.dryRun, by: "cli" }), ownership: operator.ownership }),
            requestIds.length ? requestIds : undefined,
          );
      if (options.json) {
        printJson(report);
        return requireAllChanged(new Set(requestIds).size, report.retried.length, report.dryRun, "retried");
      }
      printLine(`${report.dryRun ? "Would retry" : "Retried"} ${report.retried.length} of ${report.matched} request(s).`);
      for (const item of report.retried) printLine(`  ${item.requestId}  ${item.from} -> queued  (${item.reason})`);
      for (const item of report.skipped) printLine(`  skipped ${item.requestId}: ${item.reason}`);
      if (ownership) printObservedNote(ownership);
      requireAllChanged(new Set(requestIds).size, report.retried.length, report.dryRun, "retried");
    });
}
