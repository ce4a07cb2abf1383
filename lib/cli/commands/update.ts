import { Option, type Command } from "commander";
import type { CallbackInfo, RequestRecord } from "../../model/requestFormat";
import { STATES } from "../../model/states";
import type { Change } from "../../model/transition";
import { withLibraryTracker } from "../context";
import { fieldsFromOptions, textFileOption, type FieldOptions } from "../fields";
import { printJson, printLine } from "../output";
import { assignment, boolean, collect, integer, integerFrom, timestamp } from "../parse";
import { storeUrlOf, withSharedStore } from "../sharedStore";

interface UpdateOptions extends FieldOptions {
  state?: (typeof STATES)[number];
  reason?: string;
  by: string;
  callbackSuccess?: boolean;
  callbackAttempts?: number;
  callbackRetryTimestamp?: string[];
  callbackError?: string;
  json?: boolean;
}

/** Merge the callback flags into the request's current callback (read under the writers' lock). */
function callbackFrom(options: UpdateOptions, current: RequestRecord): CallbackInfo | undefined {
  const touched =
    options.callbackSuccess !== undefined ||
    options.callbackAttempts !== undefined ||
    options.callbackRetryTimestamp !== undefined ||
    options.callbackError !== undefined;
  if (!touched) return undefined;
  const previous = current.callback;
  return {
    ...previous,
    success: options.callbackSuccess ?? previous?.success ?? false,
    attempts: options.callbackAttempts ?? previous?.attempts ?? 0,
    retryTimestamps: [...(previous?.retryTimestamps ?? []), ...(options.callbackRetryTimestamp ?? [])],
    ...(options.callbackError !== undefined && { error: options.callbackError }),
  };
}

export function registerUpdate(program: Command): void {
  program
    .command("update <requestId>")
    .description("Apply a transition and/or set fields, under the writers' lock (replaces a jq stop hook)")
    .summary("Change a request's state or fields")
    .addOption(new Option("--state <state>", "move to this state (checked against the transition table)").choices(STATES))
    .option("--reason <text>", "why, for the history")
    .option("--by <who>", "who made the change, for the history", "cli")
    .option("--session <sessionId>", "the session the request belongs to")
    .option("--prompt <text>", "the prompt")
    .addOption(textFileOption("prompt"))
    .option("--model <name>", "the model")
    .option("--tokens <n>", "tokens used", integerFrom(0))
    .option("--exit-code <n>", "the worker's exit code", integer)
    .option("--output <text>", "the output")
    .addOption(textFileOption("output"))
    .option("--error <text>", "the error")
    .addOption(textFileOption("error"))
    .option("--timeout-at <time>", "deadline: epoch ms, ISO date, or +DURATION", timestamp(Date.now))
    .option("--callback-success <bool>", "whether the result reached its caller", boolean)
    .option("--callback-attempts <n>", "delivery attempts so far", integerFrom(0))
    .option("--callback-retry-timestamp <time>", "append a delivery retry time (repeatable)", collect)
    .option("--callback-error <text>", "the last delivery error")
    .option("--set <key=json>", "any other field (repeatable)", assignment)
    .option("--json", "print the updated request as JSON")
    .action(async (requestId: string, options: UpdateOptions, command: Command) => {
      const fields = fieldsFromOptions(options);
      // Decided on the request as the write reads it: under the writers' lock, or the row's lock on a shared store.
      const change = (current: RequestRecord): Change => {
        const callback = callbackFrom(options, current);
        const all = callback ? { ...fields, callback } : fields;
        return { to: options.state, fields: Object.keys(all).length ? all : undefined, reason: options.reason, by: options.by };
      };
      const store = storeUrlOf(command);
      const request = store
        ? await withSharedStore(store, (shared) => shared.update(requestId, change))
        : await withLibraryTracker(command, (tracker) => tracker.update(requestId, change));
      if (options.json) printJson(request);
      else printLine(`${request.requestId} ${request.state} (version ${request.version})`);
    });
}
