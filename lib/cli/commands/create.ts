import { InvalidArgumentError, Option, type Command } from "commander";
import { parseTraceparent } from "../../model/traceparent";
import { UsageError, withLibraryTracker } from "../context";
import { fieldsFromOptions, textFileOption } from "../fields";
import { printJson, printLine } from "../output";
import { storeUrlOf, withSharedStore } from "../sharedStore";
import { assignment, integerFrom, timestamp } from "../parse";

export function registerCreate(program: Command): void {
  program
    .command("create")
    .description("Create a request; prints its id")
    .requiredOption("-w, --workspace <name>", "workspace the request belongs to")
    .option("--id <requestId>", "request id (default: a random UUID)")
    .option("--chat-id <id>", "chat id")
    .option("--session <sessionId>", "session the request belongs to")
    .option("--prompt <text>", "the prompt")
    .addOption(textFileOption("prompt"))
    .option("--model <name>", "the model")
    .addOption(new Option("--state <state>", "start in this state").choices(["created", "queued", "processing"]).default("created"))
    .option("--max-attempts <n>", "how many attempts are allowed", integerFrom(1))
    .option(
      "--traceparent <value>",
      "the W3C trace context it is created in (00-<trace id>-<span id>-<flags>): its OpenTelemetry trace joins that one (default: $TRACEPARENT)",
      traceparent,
    )
    .option("--timeout-at <time>", "deadline: epoch ms, ISO date, or +DURATION", timestamp(Date.now))
    .option("--set <key=json>", "any other field (repeatable)", assignment)
    .option("--reason <text>", "why, for the history")
    .option("--json", "print the whole request as JSON")
    .action(async (options, command: Command) => {
      const fields = fieldsFromOptions(options);
      // A hook run inside a traced process may be handed its context as TRACEPARENT (the environment carrier).
      const given = (options.traceparent as string | undefined) ?? (process.env.TRACEPARENT || undefined);
      if (given !== undefined && options.traceparent === undefined && !parseTraceparent(given)) {
        throw new UsageError(`TRACEPARENT=${given}: not a W3C traceparent (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>); unset it or fix it.`);
      }
      if (given !== undefined) fields.traceparent = given;
      const input = { ...fields, requestId: options.id, workspace: options.workspace, state: options.state, reason: options.reason, by: "cli" };
      const store = storeUrlOf(command);
      const request = store
        ? await withSharedStore(store, (shared) => shared.create(input))
        : await withLibraryTracker(command, (tracker) => tracker.create(input), true);
      if (options.json) printJson(request);
      else printLine(request.requestId);
    });
}

function traceparent(value: string): string {
  if (!parseTraceparent(value)) throw new InvalidArgumentError("not a W3C traceparent: use 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>.");
  return value;
}
