import fs from "node:fs";
import path from "node:path";
import { Command, CommanderError } from "commander";
import { isReqwatchError } from "../model/errors";
import { NotAllChanged, TrackingOff, UsageError } from "./context";
import { registerAdopt } from "./commands/adopt";
import { registerCancel } from "./commands/cancel";
import { registerCleanup } from "./commands/cleanup";
import { registerCreate } from "./commands/create";
import { registerDashboard } from "./commands/dashboard";
import { registerExplain } from "./commands/explain";
import { registerGet } from "./commands/get";
import { registerFollow } from "./commands/follow";
import { registerList } from "./commands/list";
import { registerMcp } from "./commands/mcp";
import { registerMonitor } from "./commands/monitor";
import { registerQueues } from "./commands/queues";
import { registerRetry } from "./commands/retry";
import { registerRecover } from "./commands/recover";
import { registerRestore } from "./commands/restore";
import { registerSession } from "./commands/session";
import { registerSource } from "./commands/source";
import { registerOtel } from "./commands/otel";
import { registerUpdate } from "./commands/update";
import { environmentHelp } from "./environment";

export const EXIT = { ok: 0, error: 1, usage: 2 } as const;

/** package.json's version: the CLI runs as dist/cli.cjs, one folder below it. */
function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

function buildProgram(): Command {
  const version = packageVersion();
  const program = new Command("reqwatch")
    .description("Record request lifecycles in a reqwatch state directory")
    .version(version, "-V, --version", "print the version")
    .option("-d, --state-dir <path>", "state directory (default: $REQWATCH_STATE_DIR, else ./.reqwatch)")
    .configureOutput({ outputError })
    .addHelpText("after", environmentHelp())
    .exitOverride();
  for (const register of [registerCreate, registerUpdate, registerGet, registerExplain, registerList, registerRecover, registerCleanup, registerRestore, registerRetry, registerCancel, registerQueues, registerMonitor, registerSession, registerSource, registerAdopt, registerDashboard, registerOtel, registerFollow]) {
    register(program);
  }
  registerMcp(program, version);
  const everyCommand = (command: Command): Command[] => [command, ...command.commands.flatMap(everyCommand)];
  // Each command's --help shows --state-dir too: it is global, and where it matters most.
  for (const command of everyCommand(program).slice(1)) command.exitOverride().configureOutput({ outputError }).configureHelp({ showGlobalOptions: true });
  return program;
}

/**
 * Every line reqwatch writes to stderr starts with its name, commander's usage errors too, and a
 * usage error is one line (commander puts its "Did you mean" on a second).
 */
function outputError(text: string, write: (text: string) => void): void {
  write(`reqwatch: ${text.trimEnd().replace(/\s*\n\s*/g, " ")}\n`);
}

/** Runs the CLI and resolves to its exit code: 0 success, 1 error (one line on stderr), 2 usage error. */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are successes; everything else commander reports is a usage error it already printed.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof TrackingOff) return EXIT.ok;
    if (error instanceof NotAllChanged) {
      process.stderr.write(`reqwatch: ${error.message}\n`);
      return EXIT.error;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`reqwatch: error: ${error.message}\n`);
      return EXIT.usage;
    }
    const message = isReqwatchError(error) ? error.message : `unexpected error: ${(error as Error)?.message ?? String(error)}`;
    process.stderr.write(`reqwatch: ${message}\n`);
    return EXIT.error;
  }
}
