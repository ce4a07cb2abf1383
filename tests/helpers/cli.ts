import { spawnSync } from "node:child_process";
import path from "node:path";

export const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the real CLI as a child process, the way a shell hook does. */
export function runCli(args: string[], options: { stateDir?: string; env?: NodeJS.ProcessEnv } = {}): CliResult {
  const env = { ...process.env, ...options.env };
  if (options.stateDir) env.REQWATCH_STATE_DIR = options.stateDir;
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}
