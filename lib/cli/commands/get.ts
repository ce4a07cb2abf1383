import type { Command } from "commander";
import { ReqwatchError } from "../../model/errors";
import { stopIfTrackingOff, withFreshTracker } from "../context";
import { printJson } from "../output";

export function registerGet(program: Command): void {
  program
    .command("get <requestId>")
    .description("Print one request as JSON")
    .action(async (requestId: string, _options, command: Command) => {
      stopIfTrackingOff();
      const request = await withFreshTracker(command, (tracker) => tracker.get(requestId), [requestId]);
      if (!request) throw new ReqwatchError("NOT_FOUND", `Request ${requestId} does not exist.`);
      printJson(request);
    });
}
