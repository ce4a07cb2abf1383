import { InvalidArgumentError, type Command } from "commander";
import { formatAgo, formatDuration } from "../../model/duration";
import { isReqwatchError } from "../../model/errors";
import { inspectClaudeMem } from "../../sources/claudeMem";
import { parseSourceSpec, type SourceSpec } from "../../sources/sourceSpec";
import { STATES } from "../../model/states";
import { printJson, printLine, printTable } from "../output";
import { integerBetween } from "../parse";

function sourceSpec(value: string): SourceSpec {
  try {
    return parseSourceSpec(value);
  } catch (error) {
    throw new InvalidArgumentError(isReqwatchError(error) ? error.message : String(error));
  }
}

export function registerSource(program: Command): void {
  program
    .command("source")
    .argument("[source]", "claude-mem (at ~/.claude-mem/claude-mem.db) or claude-mem:<path>", sourceSpec, parseSourceSpec("claude-mem"))
    .description(
      "Read another program's queue, read-only, and say what is stuck in it by that program's own rules: claude-mem's pending_messages, in any of its schema generations. The database is never written (SQLite may add the -wal and -shm files a reader needs beside it).",
    )
    .summary("Inspect another program's queue (claude-mem), read-only")
    .option("--all", "list every message, not only the stuck ones")
    .option("-n, --limit <n>", "rows to list (1-10000)", integerBetween(1, 10_000), 50)
    .option("--json", "print the source, its counts and the messages listed as JSON")
    .action((spec: SourceSpec, options: { all?: boolean; limit: number; json?: boolean }) => {
      const now = Date.now();
      const { file, shape, messages, lastWriteAt } = inspectClaudeMem(spec.file, now);
      const counts = Object.fromEntries(STATES.map((state) => [state, 0]));
      for (const { request } of messages) counts[request.state]!++;
      const stuck = messages.filter((message) => message.stuck !== null);
      const listed = (options.all ? messages : stuck).slice(0, options.limit);
      if (options.json) {
        return printJson({
          source: { kind: spec.kind, file, generation: shape.generation, retired: shape.retired, columns: [...shape.columns].sort(), lastWriteAt },
          counts,
          stuck: stuck.length,
          messages: listed.map(({ request, stuck: reason, note }) => ({ ...request, stuckReason: reason, note })),
        });
      }
      printLine(`claude-mem: ${file} (read-only)`);
      printLine(`schema: ${shape.generation}${shape.retired ? "; from v13.4.0 claude-mem keeps its queue in memory and no longer processes this table" : ""}`);
      printLine(`last written: ${lastWriteAt === null ? "never (the table is empty)" : formatAgo(lastWriteAt, now)}`);
      printLine(`messages: ${messages.length} (${STATES.filter((state) => counts[state]).map((state) => `${counts[state]} ${state}`).join(", ") || "none"}); stuck: ${stuck.length}`);
      if (!listed.length) return printLine(options.all ? "" : "Nothing is stuck.");
      printLine();
      printTable(
        ["ID", "WORKSPACE", "STATE", "CREATED", options.all ? "STUCK / NOTE" : "WHY STUCK"],
        listed.map(({ request, stuck: reason, note }) => [request.requestId, request.workspace, request.state, formatDuration(Math.max(0, now - request.createdAt)) + " ago", reason ?? note ?? "-"]),
      );
      const more = (options.all ? messages : stuck).length - listed.length;
      if (more > 0) printLine(`\n${more} more: --limit ${Math.min(10_000, options.limit + more)}`);
    });
}
