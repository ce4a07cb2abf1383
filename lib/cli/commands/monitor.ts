import { displayJson } from "../../model/displayText";
import type { Command } from "commander";
import { formatDuration } from "../../model/duration";
import type { MonitorPass } from "../../types";
import type { RetentionRun } from "../../actions/retention";
import { stopIfTrackingOff, trackerFor } from "../context";
import { printLine } from "../output";
import { positiveDuration } from "../parse";
import { storeUrlOf } from "../sharedStore";

function describeRetention(run: RetentionRun, retentionMs: number | null): string {
  if (run.error) return `${new Date(run.finishedAt).toISOString()}  retention failed: ${run.error}`;
  const removed =
    retentionMs === null
      ? "requests kept (REQWATCH_RETENTION=off)"
      : run.removed
        ? `removed ${run.removed} finished request(s) (audit #${run.entryId}; \`reqwatch restore <id>\` or the audit page's undo brings them back)`
        : "nothing past it";
  return `${new Date(run.finishedAt).toISOString()}  retention: ${removed}${run.archiveDropped ? `; the archive dropped ${run.archiveDropped}` : ""}`;
}

function describePass(pass: MonitorPass): string {
  const c = pass.counts;
  const acted = [
    c.deadlineTimedOut && `${c.deadlineTimedOut} past deadline -> timeout`,
    c.resultsApplied && `${c.resultsApplied} result marker(s) applied`,
    c.released && `${c.released} released (worker gone)`,
    c.timedOut && `${c.timedOut} timed out (worker gone, no attempts left)`,
  ].filter(Boolean);
  return `${new Date(pass.at).toISOString()}  stuck ${pass.stuck.length}${acted.length ? `; ${acted.join(", ")}` : ""} (${pass.durationMs} ms)`;
}

export function registerMonitor(program: Command): void {
  program
    .command("monitor")
    .description(
      "Run the stuck monitor: flag stuck requests, time out past deadlines, release requests of dead workers; and the retention (REQWATCH_RETENTION) on a managed folder. On a shared store (--store): take back claims with no heartbeat",
    )
    .summary("Run the stuck monitor")
    .option("--once", "run one pass (and one run of the retention) and exit")
    .option("--interval <duration>", "time between passes (default 15s, or REQWATCH_MONITOR_INTERVAL)", positiveDuration)
    .option("--json", "print each pass as a JSON line")
    .action(async (options, command: Command) => {
      stopIfTrackingOff();
      const store = storeUrlOf(command);
      // Its own module: the shared store's monitor loads nothing of the folder's.
      if (store) return (await import("./monitorOnStore")).monitorOnStore(store, options);
      const { tracker, reader, operator, upkeep, close } = trackerFor(command, options.interval !== undefined ? { monitorIntervalMs: options.interval } : {});
      // Files other programs wrote (or a person copied in) are judged too: the index catches up with
      // the folder first (a reconciliation), and a long-running monitor follows it as the dashboard does.
      const ingest = upkeep.startIngest({ onError: (error) => process.stderr.write(`reqwatch: following the folder failed: ${(error as Error).message}\n`) });
      const report = (pass: MonitorPass) => {
        if (options.json) return process.stdout.write(`${displayJson(pass, 0)}\n`);
        printLine(describePass(pass));
        for (const stuck of pass.stuck) printLine(`  ${stuck.requestId}  ${stuck.reason}`);
      };
      const reportRetention = (run: RetentionRun) => {
        if (options.json) process.stdout.write(`${displayJson({ retention: run }, 0)}\n`);
        else printLine(describeRetention(run, reader.options.retentionMs));
      };
      if (options.once) {
        try {
          const pass = operator.monitorPass();
          const run = await operator.runRetention();
          if (options.json) process.stdout.write(`${displayJson({ ...pass, retention: run }, 0)}\n`);
          else {
            report(pass);
            if (run) reportRetention(run);
          }
        } finally {
          ingest.stop();
          close();
        }
        return;
      }
      // With --json, stdout is JSON lines only (`reqwatch monitor --json | jq` must parse every line).
      const banner = `Monitoring ${reader.stateDir.root} every ${formatDuration(reader.options.monitorIntervalMs)}; Ctrl-C to stop.`;
      if (options.json) process.stderr.write(`${banner}\n`);
      else printLine(banner);
      await new Promise<void>((resolve) => {
        const monitor = tracker.startMonitor({
          keepAlive: true,
          onPass: report,
          onRetention: reportRetention,
          onRetentionError: (error) => process.stderr.write(`reqwatch: the retention failed: ${error.message}\n`),
          onError: (error) => process.stderr.write(`reqwatch: monitor pass failed: ${error.message}\n`),
        });
        // A monitor runs for hours: if index.db is deleted or replaced meanwhile, it reopens (and,
        // if need be, rebuilds) the index instead of watching a file no one else sees. close() stops the guard.
        upkeep.startIndexGuard({
          onReopened: (cause) => process.stderr.write(`reqwatch: ${cause}; the index was reopened from the files.\n`),
          onError: (error) => process.stderr.write(`reqwatch: index check failed: ${(error as Error).message}\n`),
        });
        const stop = () => {
          monitor.stop();
          close();
          resolve();
        };
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
    });
}
