import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Option, type Command } from "commander";
import { sourceText } from "../../sources/sourceSpec";
import { sourcesFromEnv } from "../../sources/liveSource";
import { resolveStateDirPath, STATE_DIR_ENV } from "../../stateFiles/stateDir";
import { isLoopbackHost } from "../../http/loopback";
import { stopIfTrackingOff, UsageError } from "../context";
import { integerBetween, source } from "../parse";
import { otlpSettings } from "./otel";
import { telemetrySettings } from "../../telemetry/telemetrySettings";
import { refuseRenamedVariables } from "../../store/options";
import { flagSetting } from "../../model/flag";
import { firstFreePort, PORTS_TRIED } from "../../http/freePort";

export const DEFAULT_PORT = 4600;

export function registerDashboard(program: Command): void {
  program
    .command("dashboard")
    .description(
      "Serve the dashboard for the state folder on http://127.0.0.1:4600/, or the next free port when another holds it (the prebuilt pages the package carries; Ctrl-C stops it)",
    )
    .summary("Serve the dashboard")
    .option(
      "--port <n>",
      `port (default: $REQWATCH_PORT, else $PORT, else ${DEFAULT_PORT}, moved to the next free one when in use; a port named is never moved)`,
      integerBetween(1, 65535),
    )
    .option("--host <address>", "address to listen on (default: $REQWATCH_HOST, else 127.0.0.1; anything else prints a warning)")
    .option("--read-only", "observe the folder even if reqwatch manages it: no actions, no monitor changes")
    .option(
      "--otel",
      "also export every request lifecycle as OpenTelemetry traces (the OTEL_EXPORTER_OTLP_* variables; see `reqwatch otel`); its lag and last error show on the Health page",
    )
    .option(
      "--otlp-port <port>",
      "receive OpenTelemetry (OTLP/HTTP: Claude Code, the Anthropic SDK, GenAI and messaging spans) on this port of the dashboard's address; 0 for any free port, off for none (default: $REQWATCH_OTLP_PORT, else 4318)",
    )
    .option(
      "--agent-files <on|off>",
      "read Claude Code's, Codex CLI's and Gemini CLI's own session files as they write them (their folders: $REQWATCH_CLAUDE_DIR, else $CLAUDE_CONFIG_DIR, else ~/.claude; $REQWATCH_CODEX_DIR, else $CODEX_HOME, else ~/.codex; $REQWATCH_GEMINI_DIR, else $GEMINI_CLI_HOME/.gemini, else ~/.gemini), shown with the received telemetry; off for none (default: $REQWATCH_AGENT_FILES, else on)",
    )
    .option("--ipc-dir <path>", "a gateway's ipc folder with its response files (default: ipc/ beside the state folder, when it exists)")
    .option(
      "--source <source>",
      "also show another program's queue, read-only: claude-mem, claude-mem:<path> or sqlite:<mapping.json>; add ?write=1 to allow retrying and deleting where claude-mem's own recovery does the same (repeat for several; default: $REQWATCH_SOURCES)",
      // Made absolute here: the server runs elsewhere.
      (value: string, previous: string[] = []) => [...previous, sourceText(source(value))],
    )
    // `npm run dev` in the repository: Next.js in development mode, on the project's sources.
    .addOption(new Option("--dev").hideHelp())
    // For `npm start` (scripts/start.mjs), which passes its options on as given: the folder when none
    // is named (the project's own ./.reqwatch, wherever npm ran it from), and a check of every option
    // before it builds the dashboard.
    .addOption(new Option("--default-state-dir <path>").hideHelp())
    .addOption(new Option("--check").hideHelp())
    .action(async (options: DashboardOptions, command: Command) => {
      stopIfTrackingOff();
      const { stateDir, given, host } = checkedOptions(options, command);
      if (options.check) return;
      // The default port moves to the next free one (a second dashboard, the demo beside `npm start`); a port the user named does not.
      const port = given ?? (await movedFromDefault(host));
      return serve(options, stateDir, host, port);
    });
}

/** Every option checked before anything starts (the folder, the port, the telemetry and source settings): a mistake is one line, and nothing runs. */
function checkedOptions(options: DashboardOptions, command: Command): { stateDir: string; given: number | undefined; host: string } {
  const named = command.optsWithGlobals<{ stateDir?: string }>().stateDir || process.env[STATE_DIR_ENV];
  const stateDir = resolveStateDirPath(named || options.defaultStateDir);
  // Only the default ./.reqwatch is made here: a named folder that does not exist is most likely a typo.
  if (named && !fs.existsSync(stateDir)) {
    throw new UsageError(
      `the state directory ${stateDir} does not exist. Check --state-dir (or ${STATE_DIR_ENV}); to start a new one there, run \`mkdir -p ${stateDir} && npx reqwatch adopt --state-dir ${stateDir}\`.`,
    );
  }
  const given = options.port ?? portFromEnv();
  const host = options.host ?? process.env.REQWATCH_HOST ?? "127.0.0.1";
  if (!isLoopbackHost(host.includes(":") ? `[${host}]` : host))
    console.warn(`reqwatch: warning: serving on ${host}, not loopback. Anyone who can reach this address can read and change your requests.`);

  if (options.otel || otelFromEnv()) otlpSettings();
  try {
    refuseRenamedVariables(process.env);
    telemetrySettings(process.env, options.otlpPort, options.agentFiles);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!options.source && process.env.REQWATCH_SOURCES) {
    try {
      sourcesFromEnv(process.env.REQWATCH_SOURCES);
    } catch (error) {
      throw new UsageError(`REQWATCH_SOURCES: ${(error as Error).message}`);
    }
  }
  return { stateDir, given, host };
}

/** The dashboard's server in its own process, until it exits or this one is told to stop. */
function serve(options: DashboardOptions, stateDir: string, host: string, port: number): Promise<never> {
  console.log(`reqwatch: state directory ${stateDir}`);
  for (const source of options.source ?? []) {
    console.log(
      `reqwatch: source ${source}, ${source.endsWith("?write=1") ? "opened for writing: retry and delete where claude-mem's own recovery does the same" : "read-only"}`,
    );
  }
  // Its own process (dist/server.cjs, beside this file), titled reqwatch-server; it loads Next.js from the dashboard's folder.
  const server = spawn(process.execPath, [path.join(__dirname, "server.cjs"), "--hostname", host, "--port", String(port), ...(options.dev ? ["--dev"] : [])], {
    // The channel closes when this process dies, even by SIGKILL: the server then stops too.
    stdio: ["inherit", "inherit", "inherit", "ipc"],
    env: {
      NEXT_TELEMETRY_DISABLED: "1",
      ...process.env,
      NODE_ENV: options.dev ? "development" : "production",
      [STATE_DIR_ENV]: stateDir,
      ...(options.readOnly && { REQWATCH_READ_ONLY: "1" }),
      ...(options.otlpPort !== undefined && { REQWATCH_OTLP_PORT: options.otlpPort }),
      ...(options.agentFiles !== undefined && { REQWATCH_AGENT_FILES: options.agentFiles }),
      ...(options.otel && { REQWATCH_OTEL: "1" }),
      ...(options.ipcDir && { REQWATCH_IPC_DIR: path.resolve(options.ipcDir) }),
      // Resolved here (relative paths are from where the command ran), as a JSON list: a path may hold a comma.
      ...(options.source && { REQWATCH_SOURCES: JSON.stringify(options.source) }),
    },
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
  return new Promise<never>(() => {
    server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  });
}

interface DashboardOptions {
  port?: number;
  host?: string;
  readOnly?: boolean;
  ipcDir?: string;
  source?: string[];
  otel?: boolean;
  otlpPort?: string;
  agentFiles?: string;
  dev?: boolean;
  defaultStateDir?: string;
  check?: boolean;
}

/** The port the user named (REQWATCH_PORT, else PORT), or undefined: the default, which may move. */
function portFromEnv(): number | undefined {
  const value = process.env.REQWATCH_PORT ?? process.env.PORT;
  if (value === undefined) return undefined;
  try {
    return integerBetween(1, 65535)(value);
  } catch (error) {
    throw new UsageError(`${process.env.REQWATCH_PORT !== undefined ? "REQWATCH_PORT" : "PORT"}=${value}: ${(error as Error).message}`);
  }
}

/** The default port, or the first free one after it, saying so when it moved. */
async function movedFromDefault(host: string): Promise<number> {
  const port = await firstFreePort(DEFAULT_PORT, host);
  if (port === null) throw new UsageError(`ports ${DEFAULT_PORT} to ${DEFAULT_PORT + PORTS_TRIED - 1} are all in use; pick another with --port.`);
  if (port !== DEFAULT_PORT) console.log(`reqwatch: ${DEFAULT_PORT} in use: serving on http://${host.includes(":") ? `[${host}]` : host}:${port}/`);
  return port;
}

/** `REQWATCH_OTEL`, checked here so that a spelling reqwatch does not read is a usage error, not an export that never starts. */
function otelFromEnv(): boolean {
  try {
    return flagSetting(process.env, "REQWATCH_OTEL");
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
