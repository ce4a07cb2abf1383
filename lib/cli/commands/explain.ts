import type { Command } from "commander";
import { explainRequest } from "../../views/explainView";
import { missingRequestError } from "../../views/unreadableRequest";
import { stopIfTrackingOff, withFreshTracker } from "../context";
import { printJson, printLine } from "../output";

export function registerExplain(program: Command): void {
  program
    .command("explain <requestId>")
    .description("Tell one request's story: time in each state, attempts, dropped deliveries, callback, why it is stuck, its session, what to do next")
    .summary("A request's story and what to do next")
    .option("--json", "print the explanation as JSON")
    .action(async (requestId: string, options: { json?: boolean }, command: Command) => {
      stopIfTrackingOff();
      const explanation = await withFreshTracker(
        command,
        ({ reader }) => {
          const found = explainRequest(reader, requestId, reader.stuck());
          if (!found) throw missingRequestError(reader, requestId);
          return found;
        },
        [requestId],
      );
      if (options.json) printJson(explanation);
      else for (const line of explanation.lines) printLine(line);
    });
}
