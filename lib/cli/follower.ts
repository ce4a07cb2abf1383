import { spawn } from "node:child_process";
import type { StateDir } from "../stateFiles/stateDir";
import { BACKGROUND_FROM_FILES, holdsAtLeast } from "../stateFiles/stateDir";
import { liveFollower } from "../ingest/followerSync";
import { trackingEnabled } from "../store/options";
import { flagSetting } from "../model/flag";

/**
 * After a reading command on a folder of BACKGROUND_FROM_FILES files or more that no process
 * follows, start `reqwatch follow` on it, detached: the next command asks it instead of checking
 * every file. REQWATCH_FOLLOW=0 (or off) starts none.
 */
export function startFollowerIfUseful(dir: StateDir, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!flagSetting(env, "REQWATCH_FOLLOW", true) || !trackingEnabled({}, env)) return false;
  const script = process.argv[1];
  if (!script || liveFollower(dir) || !holdsAtLeast(dir.requestsDir, BACKGROUND_FROM_FILES)) return false;
  const child = spawn(process.execPath, [script, "follow", "--state-dir", dir.root], { detached: true, stdio: "ignore", env });
  child.unref();
  return true;
}
