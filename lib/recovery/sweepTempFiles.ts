import fs from "node:fs";
import path from "node:path";
import type { TrackerContext } from "../context";
import { OWN_TEMP_PATTERN } from "../fs/durableWrite";
import { pidExists } from "../process/liveness";

/** A foreign writer's `*.tmp` (the seed's `jq > tmp && mv`) younger than this may still be in use. */
export const FOREIGN_TEMP_GRACE_MS = 5 * 60 * 1000;

/**
 * Remove temp files left by crashed writers. Ours name their writer's pid: one is removed when
 * that process is gone (this process writes synchronously, so none of its own is mid-write here).
 * A foreign `*.tmp` (a `jq > tmp && mv` hook) is removed only once it is old. No lock is needed:
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
  const now = ctx.now();
  for (const name of names) {
    if (!name.endsWith(".tmp")) continue;
    const file = path.join(dir, name);
    try {
      const stat = fs.lstatSync(file);
      if (!stat.isFile()) continue;
      const own = OWN_TEMP_PATTERN.exec(name);
      if (own ? Number(own[1]) !== process.pid && pidExists(Number(own[1])) : now - stat.mtimeMs < FOREIGN_TEMP_GRACE_MS) continue;
      fs.rmSync(file);
      removed.push(`${label}/${name}`);
    } catch {
      // Already gone.
    }
  }
  return removed;
}
