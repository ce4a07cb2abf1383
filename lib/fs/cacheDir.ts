import os from "node:os";
import path from "node:path";

const CACHE_DIR_ENV = "REQWATCH_CACHE_DIR";

/** `$REQWATCH_CACHE_DIR`, else `$XDG_CACHE_HOME/reqwatch`, else `~/.cache/reqwatch`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  // Chosen at run time: Next's file tracer is told not to trace the project for these paths.
  if (env[CACHE_DIR_ENV]) return path.resolve(/*turbopackIgnore: true*/ env[CACHE_DIR_ENV]);
  const xdg = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(/*turbopackIgnore: true*/ os.homedir(), ".cache");
  return path.join(/*turbopackIgnore: true*/ xdg, "reqwatch");
}
