import type { Command } from "commander";
import { isReqwatchError } from "../../model/errors";
import { adoptStateDir } from "../../store/ownership";
import { stopIfTrackingOff, UsageError } from "../context";
import { resolveStateDirPath } from "../../stateFiles/stateDir";
import { printLine } from "../output";

export function registerAdopt(program: Command): void {
  program
    .command("adopt")
    .description("Let reqwatch manage a folder another program writes (it is observed read-only until then)")
    .summary("Let reqwatch manage this folder")
    .action((_options, command: Command) => {
      stopIfTrackingOff();
      const root = resolveStateDirPath(command.optsWithGlobals<{ stateDir?: string }>().stateDir);
      let adopted: boolean;
      try {
        adopted = adoptStateDir(root);
      } catch (error) {
        if (isReqwatchError(error) && typeof error.details?.stateDir === "string") throw new UsageError(error.message);
        throw error;
      }
      if (!adopted) return printLine(`reqwatch already manages ${root}.`);
      printLine(
        `reqwatch now manages ${root}: it writes reqwatch.json, its index and archive there, and its actions (retry, cancel, cleanup) rewrite request files.`,
      );
      printLine(
        "Another program that writes these files must do so through reqwatch (the library or `reqwatch update`), or it may overwrite a change reqwatch made at the same moment.",
      );
    });
}
