import type { Command } from "commander";
import { formatDuration } from "../../model/duration";
import { stopIfTrackingOff, trackerFor } from "../context";
import { printJson, printLine } from "../output";
import { positiveDuration } from "../parse";

export function registerRecover(program: Command): void {
  program
    .command("recover")
    .description("Reconcile the index with the files, time out hung requests, remove crashed writers' temp files")
    .summary("Reconcile the index; time out hung requests")
    .option("--hung-after <duration>", "time out requests processing for longer than this (default 1h)", positiveDuration)
    .option("--json", "print the report as JSON")
    .action(async (options, command: Command) => {
      stopIfTrackingOff();
      const tracker = trackerFor(command, options.hungAfter ? { hungAfterMs: options.hungAfter } : {});
      try {
        const report = tracker.recover();
        if (options.json) return printJson(report);
        printLine(`Scanned ${report.scanned} request files in ${report.durationMs} ms; ${report.changed} index fixes.`);
        if (report.timedOut.length) {
          printLine(`Timed out ${report.timedOut.length} hung request(s) (processing > ${formatDuration(tracker.options.hungAfterMs)}): ${report.timedOut.join(", ")}`);
        }
        if (report.removedTempFiles.length) printLine(`Removed ${report.removedTempFiles.length} temp file(s) left by crashed writers.`);
        for (const bad of report.unreadable) printLine(`Unreadable (kept): ${bad.file}: ${bad.reason}`);
      } finally {
        tracker.close();
      }
    });
}
