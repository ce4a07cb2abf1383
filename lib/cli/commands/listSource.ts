import type { Command } from "commander";
import { readSourceOnce } from "../../sources/liveSource";
import type { SourceSpec } from "../../sources/sourceSpec";
import { sourceRows } from "../../views/sourceRowsView";
import type { State } from "../../model/states";
import { UsageError } from "../context";
import { formatAgo, formatDuration } from "../../model/duration";
import { printJson, printLine, printTable } from "../output";

/** `list --source`: a page of another program's queue, read-only, with each row's stuck reason by its owner's rules. */
export function listSource(spec: SourceSpec, options: Record<string, unknown>, command: Command): void {
  const unfit: string[] = ["callbackFailed", "updatedSince", "updatedBefore", "format"].filter((key) => options[key] !== undefined);
  if (command.getOptionValueSource("sort") === "cli") unfit.push("sort");
  if (unfit.length) {
    const flag = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    throw new UsageError(
      `${unfit.map(flag).join(", ")} ${unfit.length === 1 ? "is" : "are"} not for a source: it records no callbacks or update times, lists in its id order (--order sets which way), and has no export format: --json pages through its rows with --cursor.`,
    );
  }
  return readSourceOnce(spec, (source) => {
    const page = sourceRows(source, {
      workspace: options.workspace as string | undefined,
      states: options.state as State[] | undefined,
      sessionId: options.session as string | undefined,
      createdFrom: options.createdSince as number | undefined,
      createdTo: options.createdBefore as number | undefined,
      order: options.order as "asc" | "desc",
      limit: options.limit as number,
      cursor: options.cursor as string | undefined,
    });
    if (options.json) return printJson(page);
    if (!page.items.length) return printLine("No rows match.");
    const now = Date.now();
    printTable(
      ["ID", "WORKSPACE", "STATE", "IN STATE", "ATTEMPT", "CREATED", "STUCK / NOTE"],
      page.items.map((r) => [
        r.requestId,
        r.workspace,
        r.state,
        formatDuration(Math.max(0, now - r.stateSince)),
        String(r.attempt ?? "-"),
        formatAgo(r.createdAt, now),
        r.stuckReason ? `stuck: ${r.stuckReason}` : (r.note ?? "-"),
      ]),
    );
    if (page.nextCursor) printLine(`\nMore: --cursor ${page.nextCursor}`);
  });
}
