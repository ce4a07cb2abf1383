import { Argument, type Command } from "commander";
import { formatAgo, formatDuration } from "../../model/duration";
import { STATES } from "../../model/states";
import { parseSourceSpec, type SourceSpec } from "../../sources/sourceSpec";
import { sourceReport } from "../../views/sourceView";
import { workerLine } from "../../views/workerLine";
import { printJson, printLine, printTable } from "../output";
import { sourceFor } from "../context";
import { integerBetween, readableSource } from "../parse";

export function registerSource(program: Command): void {
  program
    .command("source")
    .addArgument(
      new Argument(
        "[source]",
        "claude-mem (at ~/.claude-mem/claude-mem.db), claude-mem:<path>, sqlite:<mapping.json>, or otel (what the dashboard's OpenTelemetry receiver kept for the state folder)",
      )
        .argParser(readableSource)
        .default(parseSourceSpec("claude-mem"), "claude-mem"),
    )
    .description(
      "Read another program's queue, read-only, and say what is stuck in it by that program's own rules: claude-mem's pending_messages in any of its schema generations (and from v13.4.0, what its worker holds in memory, asked over its HTTP API), or any SQLite job table a mapping file describes (see the README). The database is never written (SQLite may add the -wal and -shm files a reader needs beside it).",
    )
    .summary("Read another program's queue, read-only")
    .option("--all", "list every message, not only the stuck ones")
    .option("-n, --limit <n>", "rows to list (1-10000)", integerBetween(1, 10_000), 50)
    .option("--json", "print the source, its counts and the messages listed as JSON (`more`: how many it left out)")
    .action(async (given: SourceSpec | "otel", options: { all?: boolean; limit: number; json?: boolean }, command: Command) => {
      const now = Date.now();
      const view = await sourceReport(await sourceFor(command, given), options, now);
      if (options.json) return printJson(view);
      const { source, counts } = view;
      printLine(`${source.kind}: ${source.file}, table ${source.table}${source.mapping ? ` (mapping ${source.mapping})` : ""}, read-only`);
      if (source.generation)
        printLine(
          `schema: ${source.generation}${source.retired ? "; from v13.4.0 claude-mem keeps its queue in memory and no longer processes this table" : ""}`,
        );
      if (view.worker) printLine(`worker: ${workerLine(view.worker)}`);
      printLine(`last written: ${source.lastWriteAt === null ? "never (the table is empty)" : formatAgo(source.lastWriteAt, now)}`);
      printLine(
        `${source.kind === "claude-mem" ? "messages" : source.kind === "otel" ? "lifecycles" : "jobs"}: ${view.total} (${
          STATES.filter((state) => counts[state])
            .map((state) => `${counts[state]} ${state}`)
            .join(", ") || "none"
        }); stuck: ${view.stuck}`,
      );
      if (!view.messages.length) return printLine(options.all ? "" : "Nothing is stuck.");
      printLine();
      printTable(
        ["ID", "WORKSPACE", "STATE", "CREATED", options.all ? "STUCK / NOTE" : "WHY STUCK"],
        view.messages.map((message) => [
          message.requestId,
          message.workspace,
          message.state,
          `${formatDuration(Math.max(0, now - message.createdAt))} ago`,
          message.stuckReason ?? message.note ?? "-",
        ]),
      );
      if (view.more > 0)
        printLine(
          `\n${view.more} more: --limit ${Math.min(10_000, options.limit + view.more)}${options.limit + view.more > 10_000 ? `, or page through every row with \`reqwatch list --source <source> --json\`` : ""}`,
        );
    });
}
