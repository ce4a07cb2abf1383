import fs from "node:fs";
import type { Command } from "commander";
import { followerDir, liveFollower } from "../../ingest/followerSync";
import { stopIfTrackingOff, trackerFor } from "../context";
import { positiveDuration } from "../parse";

/** A follower that no command asked anything for this long ends. */
const FOLLOW_IDLE_MS = 10 * 60_000;
const CHECK_EVERY_MS = 5_000;

/**
 * `reqwatch follow`: keep a big folder's index current for the commands that read it, so a `list`
 * need not check every file (lib/ingest/followerSync.ts). A reading command starts it on a folder
 * of 2,000 files or more when no process follows the folder; it rebuilds a new index meanwhile, and
 * ends once no command has asked it anything for a while, when another process follows the folder,
 * or when the folder is gone.
 */
export function registerFollow(program: Command): void {
  program
    .command("follow", { hidden: true })
    .description("Keep the index current for the commands that read it (a reading command starts this on a big folder)")
    .option("--idle <duration>", "end after this long with no command asking (default 10m)", positiveDuration)
    .action(async (options: { idle?: number }, command: Command) => {
      stopIfTrackingOff();
      const { reader, upkeep, close } = trackerFor(command, { rebuild: "in-background" });
      const quiet = () => {};
      const ingest = upkeep.startIngest({ onError: quiet });
      upkeep.startIndexGuard({ onError: quiet });
      const { requestsDir } = reader.stateDir;
      const idleMs = options.idle ?? FOLLOW_IDLE_MS;
      await new Promise<void>((resolve) => {
        let lastAsked = Date.now();
        const stop = () => {
          clearInterval(check);
          ingest.stop();
          close();
          resolve();
        };
        // Each command's question is a file made and removed in the follower folder: its mtime says when the last one came.
        const check = setInterval(
          () => {
            const asked = fs.statSync(followerDir(reader.stateDir), { throwIfNoEntry: false })?.mtimeMs ?? 0;
            lastAsked = Math.max(lastAsked, asked);
            const holder = liveFollower(reader.stateDir);
            const another = holder !== null && holder.pid !== process.pid;
            if (!fs.existsSync(requestsDir) || another || Date.now() - lastAsked > idleMs) stop();
          },
          Math.min(CHECK_EVERY_MS, idleMs),
        );
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
        // A new index is rebuilt here, on a thread of its own, while the watcher already follows. A
        // rebuild that fails ends the follower: the commands waiting for it then rebuild themselves.
        upkeep.rebuildIndex().catch(stop);
      });
    });
}
