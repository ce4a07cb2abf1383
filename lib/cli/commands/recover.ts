import { Option, type Command } from "commander";
import { formatDuration } from "../../model/duration";
import { stopIfTrackingOff, trackerFor, UsageError } from "../context";
import { printJson, printLine } from "../output";
import { positiveDuration } from "../parse";

export function registerRecover(program: Command): void {
  program
    .command("recover")
    .description("Reconcile the index with the files, time out stuck processing requests (no worker holds them), remove crashed writers' temp files")
    .summary("Reconcile the index; time out stuck requests")
    .option(
      "--processing-stuck-after <duration>",
      "time out requests processing this long with no worker holding them (default 1h; REQWATCH_PROCESSING_STUCK_AFTER)",
      positiveDuration,
    )
    // The flag's old name, refused naming the new one (its value optional, so the refusal is what is said either way).
    .addOption(new Option("--hung-after [duration]").hideHelp())
    .option("--json", "print the report as JSON")
    .action(async (options: { processingStuckAfter?: number; hungAfter?: string | true; json?: boolean }, command: Command) => {
      if (options.hungAfter !== undefined) throw new UsageError("--hung-after is renamed --processing-stuck-after: use --processing-stuck-after instead.");
      stopIfTrackingOff();
      const stuckAfter = options.processingStuckAfter;
      const { reader, operator, close } = trackerFor(command, stuckAfter ? { processingStuckAfterMs: stuckAfter } : {});
      try {
        const report = operator.recover();
        if (options.json) return printJson(report);
        printLine(`Scanned ${report.scanned} request files in ${report.durationMs} ms; ${report.changed} index fixes.`);
        if (report.timedOut.length) {
          printLine(
            `Timed out ${report.timedOut.length} stuck request(s) (processing > ${formatDuration(reader.options.processingStuckAfterMs)}, no worker holding them): ${report.timedOut.join(", ")}`,
          );
        }
        if (report.removedTempFiles.length) printLine(`Removed ${report.removedTempFiles.length} temp file(s) left by crashed writers.`);
        for (const bad of report.unreadable) printLine(`Unreadable (kept): ${bad.file}: ${bad.reason}`);
      } finally {
        close();
      }
    });
}
