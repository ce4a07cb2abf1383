import type { IndexDb } from "./index/openIndex";
import type { StateDir } from "./stateDir";

/** What the operations share: the folder, the index, and the clock. Passed in, never global. */
export interface TrackerContext {
  dir: StateDir;
  db: IndexDb;
  now: () => number;
}
