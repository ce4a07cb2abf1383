import { once } from "node:events";
import { Option, type Command } from "commander";
import type { SourceSpec } from "../../sources/sourceSpec";
import { MAX_PAGE_SIZE, SORT_FIELDS } from "../../model/listFilters";
import type { State } from "../../model/states";
import { exportChunks, exportHeader, EXPORT_FORMATS } from "../../views/exportRows";
import { freshPage, sourceFor, trackingIsOff, UsageError, withFreshTracker } from "../context";
import { asUsageOnStore, storeUrlOf, withSharedStore } from "../sharedStore";
import { formatAgo, formatDuration } from "../../model/duration";
import { printJson, printLine, printNote, printTable } from "../output";
import { unreadableNote } from "../../views/unreadableRequest";
import { integerBetween, readableSource, since, states } from "../parse";

export function registerList(program: Command): void {
  program
    .command("list")
    .description("List requests, most recently updated first")
    .summary("List requests, newest update first")
    .option("-w, --workspace <name>", "only this workspace")
    .option("-s, --state <states>", "only these states (comma-separated or repeated)", states)
    .option("--session <sessionId>", "only this session")
    .option(
      "--callback-failed",
      "only requests whose callback delivery failed (their own, or a gateway's response file: REQWATCH_IPC_DIR, or ipc/ beside the state folder)",
    )
    .option("--created-since <when>", "created at or after: a duration ago (1h), ISO date or epoch ms", since(Date.now))
    .option("--created-before <when>", "created before", since(Date.now))
    .option("--updated-since <when>", "updated at or after", since(Date.now))
    .option("--updated-before <when>", "updated before", since(Date.now))
    .addOption(new Option("--sort <field>", "sort by").choices(SORT_FIELDS).default("updatedAt"))
    .addOption(new Option("--order <order>", "sort order").choices(["asc", "desc"]).default("desc"))
    .option("-n, --limit <n>", `rows per page (1-${MAX_PAGE_SIZE})`, integerBetween(1, MAX_PAGE_SIZE), 50)
    .option("--cursor <cursor>", "continue after a previous page")
    .option("--json", "print the page as JSON ({ items, nextCursor })")
    .option(
      "--source <source>",
      "list another program's queue instead, read-only: claude-mem, claude-mem:<path> or sqlite:<mapping.json>, or otel for what the dashboard's OpenTelemetry receiver kept (in its id order, newest first; filters by workspace, state, session and creation time)",
      readableSource,
    )
    .addOption(
      new Option(
        "--format <format>",
        "every request that matched when it began, each once, as CSV or JSON Lines (one snapshot of the index; --limit is the page size)",
      )
        .choices(EXPORT_FORMATS)
        .conflicts(["json", "cursor"]),
    )
    .action(async (options, command: Command) => {
      // Its own module: the source readers load only for --source.
      if (options.source) return (await import("./listSource")).listSource(await sourceFor(command, options.source as SourceSpec | "otel"), options, command);
      const filter = {
        workspace: options.workspace,
        states: options.state as State[] | undefined,
        sessionId: options.session,
        ...(options.callbackFailed && { callbackFailed: true }),
        createdFrom: options.createdSince,
        createdTo: options.createdBefore,
        updatedFrom: options.updatedSince,
        updatedTo: options.updatedBefore,
        sort: options.sort,
        order: options.order,
      };
      const store = storeUrlOf(command);
      if (store && options.source) throw new UsageError("not yet on a shared store: list --source (another program's queue); run it without --store.");
      if (store && options.format) throw new UsageError("not yet on a shared store: list --format; page with --json and --cursor instead.");
      // With tracking off nothing is recorded: there is nothing to list.
      const off = !store && trackingIsOff();
      if (options.format) {
        if (off) process.stdout.write(exportHeader(options.format));
        else
          await withFreshTracker(command, async ({ reader }) => {
            for await (const chunk of exportChunks(reader, filter, options.format, options.limit)) {
              if (!process.stdout.write(chunk)) await once(process.stdout, "drain");
            }
          });
        return;
      }
      const paged = { ...filter, limit: options.limit, cursor: options.cursor };
      const { page, unreadable } = off
        ? { page: { items: [], nextCursor: null }, unreadable: [] }
        : store
          ? { page: await withSharedStore(store, (shared) => asUsageOnStore(() => shared.list(paged))), unreadable: [] }
          : await freshPage(command, paged);
      // On stderr, so a script reading the page reads what it always did.
      for (const line of unreadableNote(unreadable)) printNote(line);
      if (options.json) return printJson(page);
      if (!page.items.length) return printLine("No requests match.");
      const now = Date.now();
      printTable(
        ["ID", "WORKSPACE", "STATE", "IN STATE", "ATTEMPT", "MODEL", "UPDATED"],
        page.items.map((r) => [
          r.requestId,
          r.workspace,
          r.state,
          formatDuration(Math.max(0, now - r.stateSince)),
          String(r.attempt ?? "-"),
          r.model ?? "-",
          formatAgo(r.lastUpdatedAt, now),
        ]),
      );
      if (page.nextCursor) printLine(`\nMore: --cursor ${page.nextCursor}`);
    });
}
