import fs from "node:fs";
import { jsonObject, smallJsonValue } from "../fs/readSmallJson";
import { claimLiveness, currentProcess, type ProcessIdentity } from "./liveness";

/** Not held: who holds it (null in the moment another process replaced the file). */
type Holding = { held: true } | { held: false; holder: ProcessIdentity | null };

/** A pid, a host name and a start time. */
const MAX_HOLDER_BYTES = 4096;

function readHolder(file: string): ProcessIdentity | null {
  return smallJsonValue(file, {
    maxBytes: MAX_HOLDER_BYTES,
    links: "refuse",
    shape: (json) => {
      const value = jsonObject(json) as Partial<ProcessIdentity> | undefined;
      return typeof value?.pid === "number" && typeof value.host === "string"
        ? { pid: value.pid, host: value.host, processStartedAt: value.processStartedAt ?? null }
        : undefined;
    },
  });
}

/** The live process a holder file names, or null (no file, not readable, or its process gone); a holder on another host counts as live. */
export function liveHolder(file: string): ProcessIdentity | null {
  const holder = readHolder(file);
  return holder && claimLiveness(holder) !== "gone" ? holder : null;
}

const isMe = (holder: ProcessIdentity | null) => {
  const me = currentProcess();
  return holder !== null && holder.pid === me.pid && holder.host === me.host && holder.processStartedAt === me.processStartedAt;
};

/**
 * One process at a time does a job for a folder: the file names the process that holds it (pid,
 * host, start time). `hold()` takes it when it is free or its holder is gone, and says who holds it
 * otherwise; a holder on another host counts as alive. Two processes that take a gone holder's file
 * at the same moment both write; each `hold()` reads the file again, so the one not named in it
 * learns it lost at its next call.
 */
export function holderFile(file: string) {
  return {
    hold(): Holding {
      const holder = readHolder(file);
      if (isMe(holder)) return { held: true };
      if (holder && claimLiveness(holder) !== "gone") return { held: false, holder };
      if (holder || fs.existsSync(file)) fs.rmSync(file, { force: true });
      try {
        fs.writeFileSync(file, `${JSON.stringify(currentProcess())}\n`, { flag: "wx", mode: 0o644 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const now = readHolder(file);
      return isMe(now) ? { held: true } : { held: false, holder: now };
    },
    /** Give it up, if this process holds it. */
    release(): void {
      if (isMe(readHolder(file))) fs.rmSync(file, { force: true });
    },
  };
}
