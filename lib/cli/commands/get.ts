import type { Command } from "commander";
import { missingRequestError } from "../../views/unreadableRequest";
import { stopIfTrackingOff, withFreshTracker } from "../context";
import { printJson } from "../output";

export function registerGet(program: Command): void {
  program
    .command("get <requestId>")
    .description("Print one request as JSON")
    .action(async (requestId: string, _options, command: Command) => {
      stopIfTrackingOff();
      const request = await withFreshTracker(
        command,
        ({ reader }) => {
          const found = reader.get(requestId);
          if (!found) throw missingRequestError(reader, requestId);
          return found;
        },
        [requestId],
      );
      printJson(request);
    });
}
