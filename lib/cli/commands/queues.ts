import type { Command } from "commander";
import { formatDuration } from "../../model/duration";
import { reqwatchCommand } from "../../model/shellCommand";
import { queueStatusText, queuesView } from "../../views/queuesView";
import { stopIfTrackingOff, trackingIsOff, withFreshTracker, withTracker } from "../context";
import { printJson, printLine, printTable } from "../output";

export function registerQueues(program: Command): void {
  program
    .command("queues")
    .description("Each workspace's queue: queued, processing, the oldest wait, and its status (waiting, running, stuck and why, or paused)")
    .summary("List the workspaces' queues")
    .option("--json", "print the queues as JSON")
    .action(async (options, command: Command) => {
      const now = Date.now();
      const rows = trackingIsOff() ? [] : await withFreshTracker(command, ({ reader }) => queuesView(reader, reader.stuck()));
      if (options.json) return printJson(rows);
      if (!rows.length) return printLine("No request is queued or processing, and no workspace is paused.");
      printTable(
        ["WORKSPACE", "QUEUED", "PROCESSING", "OLDEST WAIT", "STATUS"],
        rows.map((row) => [
          row.workspace,
          String(row.queued),
          String(row.processing),
          row.oldestQueuedSince === null ? "-" : formatDuration(now - row.oldestQueuedSince),
          queueStatusText(row),
        ]),
      );
    });

  program
    .command("pause <workspace>")
    .description("Pause a workspace's queue: workers take nothing from it (claimed work finishes) until `reqwatch resume`; kept in the state folder")
    .summary("Pause a workspace's queue")
    .option("--reason <text>", "why, for the dashboard and the audit log")
    .action(async (workspace: string, options: { reason?: string }, command: Command) => {
      stopIfTrackingOff();
      const outcome = await withTracker(command, ({ operator }) =>
        operator.pause(workspace, { by: "cli", ...(options.reason !== undefined && { reason: options.reason }) }),
      );
      const since = outcome.pause.pausedAt === null ? "" : ` since ${new Date(outcome.pause.pausedAt).toISOString()}`;
      printLine(
        outcome.changed
          ? `Paused ${workspace}: workers take nothing from it until \`${reqwatchCommand("resume", [workspace])}\`.`
          : `${workspace} was already paused${since}.`,
      );
    });

  program
    .command("resume <workspace>")
    .description("Resume a paused workspace's queue: workers take from it again at their next claim")
    .summary("Resume a paused workspace's queue")
    .action(async (workspace: string, _options, command: Command) => {
      stopIfTrackingOff();
      const resumed = await withTracker(command, ({ operator }) => operator.resume(workspace, { by: "cli" }));
      printLine(resumed ? `Resumed ${workspace}.` : `${workspace} is not paused.`);
    });
}
