import type { Command } from "commander";
import type { CopyReport } from "../../postgres/copyStore";
import { UsageError } from "../context";
import { printJson, printLine, printNote } from "../output";
import { integerBetween } from "../parse";
import { NotAllChanged } from "../outcomes";

const POSTGRES_URL = /^postgres(ql)?:\/\//;

export function registerStore(program: Command): void {
  const store = program.command("store").description("Copy requests to or from a shared store");
  store
    .command("copy")
    .description(
      "Copy every request with its history from a state folder into a shared store, or back: in batches, each one transaction; run again after a stop to finish (what is there at the same version is skipped); the source is only read",
    )
    .summary("Copy requests between a state folder and a shared store")
    .requiredOption("--from <folder|url>", "the state folder, or the postgres:// URL, to copy from")
    .requiredOption("--to <folder|url>", "the state folder, or the postgres:// URL, to copy into")
    .option("--batch-size <n>", "requests per batch (1-10000)", integerBetween(1, 10_000), 100)
    .option("--json", "print the report as JSON")
    .action(async (options: { from: string; to: string; batchSize: number; json?: boolean }) => {
      const fromStore = POSTGRES_URL.test(options.from);
      const toStore = POSTGRES_URL.test(options.to);
      if (fromStore === toStore) throw new UsageError("store copy takes a state folder and a postgres:// URL: one as --from, the other as --to.");
      const { copyFolderToStore, copyStoreToFolder } = await import("../../postgres/copyStore");
      const onBatch = (report: CopyReport) => {
        if (!options.json) printNote(`batch ${report.batches}: ${report.copied} copied, ${report.alreadyThere} already there`);
      };
      const copyOptions = { batchSize: options.batchSize, onBatch };
      const report = fromStore
        ? await copyStoreToFolder(options.from, options.to, copyOptions)
        : await copyFolderToStore(options.from, options.to, copyOptions);
      if (options.json) printJson(report);
      else {
        printLine(`Copied ${report.copied} of ${report.found} request(s) from ${report.from} to ${report.to}; ${report.alreadyThere} were there already.`);
        for (const item of report.conflicts) printLine(`  not copied ${item.requestId}: ${item.reason}`);
        for (const item of report.unreadable) printLine(`  unreadable ${item.requestId}: ${item.reason}`);
      }
      const left = report.conflicts.length + report.unreadable.length;
      if (left) throw new NotAllChanged(`${left} of ${report.found} request(s) were not copied (the lines above say why).`);
    });
}
