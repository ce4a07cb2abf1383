import fs from "node:fs";
import path from "node:path";
import type { TrackerContext } from "../context";
import { withWritersLock } from "../commitChange";
import { OWN_TEMP_PATTERN } from "../fs/durableWrite";

/** A foreign writer's `*.tmp` (the seed's `jq > tmp && mv`) younger than this may still be in use. */
export const FOREIGN_TEMP_GRACE_MS = 5 * 60 * 1000;

/**
 * Remove temp files left by crashed writers. Ours are written only under the writers' lock, so
 * while we hold it none of ours is in use; a foreign `*.tmp` is removed only once it is old.
 */
export function sweepTempFiles(ctx: TrackerContext): string[] {
  return withWritersLock(ctx, () => {
    const removed: string[] = [];
    let names: string[];
    try {
      names = fs.readdirSync(ctx.dir.requestsDir);
    } catch {
      return removed;
    }
    const now = ctx.now();
    for (const name of names) {
      if (!name.endsWith(".tmp")) continue;
      const file = path.join(ctx.dir.requestsDir, name);
      try {
        const stat = fs.lstatSync(file);
        if (!stat.isFile()) continue;
        if (!OWN_TEMP_PATTERN.test(name) && now - stat.mtimeMs < FOREIGN_TEMP_GRACE_MS) continue;
        fs.rmSync(file);
        removed.push(`requests/${name}`);
      } catch {
        // Already gone.
      }
    }
    return removed;
  });
}
