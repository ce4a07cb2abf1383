import type { Command } from "commander";
import { stopIfTrackingOff, withTracker } from "../context";
import { printLine } from "../output";

export function registerRestore(program: Command): void {
  program
    .command("restore <requestId>")
    .description("Bring an archived request back from the archive (of an id archived more than once, the newest copy); never over a request that exists")
    .summary("Bring a request back from the archive")
    .action(async (requestId: string, _options, command: Command) => {
      stopIfTrackingOff();
      const request = await withTracker(command, ({ operator }) => operator.restore(requestId));
      printLine(`Restored ${request.requestId} (${request.state}).`);
    });
}
