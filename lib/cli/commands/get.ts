import type { Command } from "commander";
import { ReqwatchError } from "../../model/errors";
import { missingRequestError } from "../../views/unreadableRequest";
import { stopIfTrackingOff, withFreshTracker } from "../context";
import { printJson } from "../output";
import { storeUrlOf, withSharedStore } from "../sharedStore";

export function registerGet(program: Command): void {
  program
    .command("get <requestId>")
    .description("Print one request as JSON")
    .action(async (requestId: string, _options, command: Command) => {
      stopIfTrackingOff();
      const store = storeUrlOf(command);
      if (store) return printJson(await withSharedStore(store, async (shared) => (await shared.get(requestId)) ?? throwMissing(requestId)));
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

function throwMissing(requestId: string): never {
  throw new ReqwatchError("NOT_FOUND", `Request ${requestId} does not exist.`);
}
