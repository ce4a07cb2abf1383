import path from "node:path";
import { resolveTrackerOptions } from "../../lib/store/options";
import type { AgentFiles } from "../../lib/telemetry/agentFiles/agentFiles";
import { AgentFileFollower } from "../../lib/telemetry/agentFiles/followAgentFiles";
import type { LineBounds } from "../../lib/telemetry/agentFiles/readLines";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { tempParent } from "./stateDir";

const KEEP_MS = 24 * 3600_000;

interface FollowerOptions {
  /** The follower's clock, moved by `setClock`; without it, the follower reads the time itself. */
  now?: number;
  /** Read every file and the agent's runs at once (the default); false: the test calls `follower.start()`. */
  start?: boolean;
  /** The telemetry store to keep into, and its file (a second follower on a store, as after a restart); default, a fresh one. */
  into?: { file: string; store?: TelemetryStore };
  bounds?: LineBounds;
  /** Watch the folder and look again on a timer, as the dashboard does; default, the test calls `readAll` and `checkRuns`. */
  live?: boolean;
}

/**
 * One agent's folder followed into a telemetry store, as the dashboard follows it, on a clock the test
 * holds. The store's file is in a folder removed after the test; the test closes the store.
 */
export function anAgentFollower<S>(agent: AgentFiles<S>, folder: string, { now, start = true, into, bounds, live }: FollowerOptions = {}) {
  const file = into?.file ?? path.join(tempParent(), "telemetry.db");
  const store = into?.store ?? new TelemetryStore(file, { keepMs: KEEP_MS, maxBytes: 200e6 });
  let clock = now;
  const follower = new AgentFileFollower({
    folder,
    agent,
    store,
    redaction: resolveTrackerOptions({}).redaction,
    keepMs: KEEP_MS,
    ...(clock !== undefined && { now: () => clock! }),
    ...(bounds && { bounds }),
    ...(live && { live }),
  });
  if (start) follower.start();
  return {
    file,
    store,
    follower,
    setClock: (at: number) => {
      clock = at;
    },
  };
}
