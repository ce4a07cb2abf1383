import fs from "node:fs";
import path from "node:path";
import { Command, CommanderError } from "commander";
import { isReqwatchError } from "../model/errors";
import { NotAllChanged, TrackingOff, UsageError } from "./outcomes";

type Register = (program: Command, version: string) => void;

/**
 * Every command, in the order `reqwatch --help` lists them, by the module that registers it (queues
 * registers pause and resume too). Each is loaded when it is needed: its code and what it imports are
 * chunks of their own, so `reqwatch list` loads neither the MCP server nor the other commands' views.
 */
export const COMMANDS: readonly { names: readonly string[]; load: () => Promise<Register> }[] = [
  { names: ["create"], load: () => import("./commands/create").then((m) => m.registerCreate) },
  { names: ["update"], load: () => import("./commands/update").then((m) => m.registerUpdate) },
  { names: ["get"], load: () => import("./commands/get").then((m) => m.registerGet) },
  { names: ["explain"], load: () => import("./commands/explain").then((m) => m.registerExplain) },
  { names: ["list"], load: () => import("./commands/list").then((m) => m.registerList) },
  { names: ["recover"], load: () => import("./commands/recover").then((m) => m.registerRecover) },
  { names: ["cleanup"], load: () => import("./commands/cleanup").then((m) => m.registerCleanup) },
  { names: ["restore"], load: () => import("./commands/restore").then((m) => m.registerRestore) },
  { names: ["retry"], load: () => import("./commands/retry").then((m) => m.registerRetry) },
  { names: ["cancel"], load: () => import("./commands/cancel").then((m) => m.registerCancel) },
  { names: ["queues", "pause", "resume"], load: () => import("./commands/queues").then((m) => m.registerQueues) },
  { names: ["monitor"], load: () => import("./commands/monitor").then((m) => m.registerMonitor) },
  { names: ["session"], load: () => import("./commands/session").then((m) => m.registerSession) },
  { names: ["source"], load: () => import("./commands/source").then((m) => m.registerSource) },
  { names: ["adopt"], load: () => import("./commands/adopt").then((m) => m.registerAdopt) },
  { names: ["dashboard"], load: () => import("./commands/dashboard").then((m) => m.registerDashboard) },
  { names: ["usage"], load: () => import("./commands/usage").then((m) => m.registerUsage) },
  { names: ["otel"], load: () => import("./commands/otel").then((m) => m.registerOtel) },
  { names: ["follow"], load: () => import("./commands/follow").then((m) => m.registerFollow) },
  { names: ["mcp"], load: () => import("./commands/mcp").then((m) => m.registerMcp) },
  { names: ["store"], load: () => import("./commands/store").then((m) => m.registerStore) },
];

const EXIT = { ok: 0, error: 1, usage: 2 } as const;

/** package.json's version: the CLI runs as dist/cli.cjs, one folder below it. */
function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

/**
 * The program with the commands `argv` needs: the one it runs, or every command when it asks for the
 * program's help or names none commander knows (which then says so, and suggests the nearest).
 */
async function buildProgram(argv: readonly string[]): Promise<Command> {
  const version = packageVersion();
  const program = new Command("reqwatch")
    .description("Record request lifecycles in a reqwatch state directory")
    .version(version, "-V, --version", "print the version")
    .option("-d, --state-dir <path>", "state directory (default: $REQWATCH_STATE_DIR, else ./.reqwatch)")
    .option("--store <url>", "a shared store, postgres://user:password@host/database, instead of a state directory (default: $REQWATCH_STORE)")
    .configureOutput({ outputError })
    .exitOverride()
    // A command that does not run on a shared store refuses one rather than read a state folder.
    .hook("preAction", async (program, action) => {
      if (program.opts().store !== undefined || process.env.REQWATCH_STORE) (await import("./sharedStore")).refuseOffSharedStore(action);
    });
  const needed = commandsFor(program, argv);
  for (const register of await Promise.all(needed.map((entry) => entry.load()))) register(program, version);
  if (needed === COMMANDS) program.addHelpText("after", (await import("./environment")).environmentHelp());
  const everyCommand = (command: Command): Command[] => [command, ...command.commands.flatMap(everyCommand)];
  // Each command's --help shows --state-dir too: it is global, and where it matters most.
  for (const command of everyCommand(program).slice(1)) command.exitOverride().configureOutput({ outputError }).configureHelp({ showGlobalOptions: true });
  return program;
}

/**
 * The commands commander needs for `argv`, read as it reads it: the first operand, past the program's
 * options that take a value, names the one it runs; --version first needs none. Anything else (--help,
 * --state-dir=<path>, no command, an unknown one) needs them all.
 */
function commandsFor(program: Command, argv: readonly string[]): typeof COMMANDS {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("-")) {
      const named = COMMANDS.find((entry) => entry.names.includes(arg));
      return named ? [named] : COMMANDS;
    }
    const option = program.options.find((candidate) => candidate.short === arg || candidate.long === arg);
    if (option?.long === "--version") return [];
    if (!option?.required) return COMMANDS;
    i++;
  }
  return COMMANDS;
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
    await (await buildProgram(argv)).parseAsync(argv, { from: "user" });
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
