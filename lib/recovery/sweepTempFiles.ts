import fs from "node:fs";
import path from "node:path";
import type { TrackerContext } from "../store/context";
import { OWN_TEMP_PATTERN } from "../fs/durableWrite";
import { pidExists } from "../process/liveness";

/**
 * Remove temp files left by crashed reqwatch writers: ours name their writer's pid, and one is
 * removed when that process is gone. This process's own are its spares, kept for reuse on purpose
 * and removed when its tracker closes. Another program's `*.tmp` (a `jq > tmp && mv` hook, a
 * gateway's `<id>.json.tmp`) is its own business and never touched. No lock is needed:
 * writers fsync their temps outside the writers' lock, so holding it would protect nothing.
 */
export function sweepTempFiles(ctx: TrackerContext): string[] {
  return [
    ...sweepFolder(ctx, ctx.dir.requestsDir, "requests"),
    ...sweepFolder(ctx, ctx.dir.sessionsDir, "sessions"),
    ...sweepFolder(ctx, ctx.dir.resultsDir, "results"),
  ];
}

function sweepFolder(ctx: TrackerContext, dir: string, label: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const own = OWN_TEMP_PATTERN.exec(name);
    if (!own) continue;
    const pid = Number(own[1]);
    if (pid === process.pid || pidExists(pid)) continue;
    const file = path.join(dir, name);
    try {
      if (!fs.lstatSync(file).isFile()) continue;
      fs.rmSync(file);
      removed.push(`${label}/${name}`);
    } catch {
      // Already gone.
    }
  }
  return removed;
}
