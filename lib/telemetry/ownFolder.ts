import fs from "node:fs";
import { ReqwatchError } from "../model/errors";

// Apart from ./sharedTelemetry.ts: the usage ledger checks the folder without loading the receiver.

/**
 * Make the shared folder private to the user (0700), and refuse one another user owns: what agents
 * sent holds their prompts, and the lease there decides which process receives them.
 */
export function ensureOwnFolder(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new ReqwatchError(
      "BAD_INPUT",
      `Cannot make the received telemetry's folder ${dir}: ${(error as Error).message}. Set REQWATCH_TELEMETRY_DIR to a folder of your own.`,
    );
  }
  const stat = fs.lstatSync(dir);
  if (!stat.isDirectory())
    throw new ReqwatchError("BAD_INPUT", `The received telemetry's folder ${dir} is not a folder. Set REQWATCH_TELEMETRY_DIR to a folder of your own.`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new ReqwatchError(
      "BAD_INPUT",
      `The received telemetry's folder ${dir} belongs to uid ${stat.uid}, not to this user (uid ${uid}): reqwatch keeps what agents send only in a folder of the user's own. Set REQWATCH_TELEMETRY_DIR to one.`,
    );
  }
  if ((stat.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}
