import type { MonitorPass } from "./monitorPass";
import { runEvery, type IntervalOptions } from "../process/interval";

export interface MonitorHandle {
  /** The latest pass, or null before the first. */
  lastPass(): MonitorPass | null;
  /** The error of the latest pass, if it failed (the monitor keeps running). */
  lastError(): Error | null;
  /** Run a pass now (also resets nothing: the interval keeps its rhythm). */
  passNow(): MonitorPass;
  stop(): void;
}

export interface MonitorLoopOptions extends IntervalOptions {
  /** Called after every pass. */
  onPass?: (pass: MonitorPass) => void;
  onError?: (error: Error) => void;
}

/**
 * Run `pass` now and then every `intervalMs`, in whatever process hosts it (the dashboard server,
 * `reqwatch monitor`). A failing pass is kept as `lastError` and never stops the loop: the monitor
 * exists because crashes happen while the system runs, not only at start-up.
 */
export function startMonitorLoop(pass: () => MonitorPass, options: MonitorLoopOptions): MonitorHandle {
  let last: MonitorPass | null = null;
  let lastError: Error | null = null;
  const run = (): MonitorPass | null => {
    try {
      last = pass();
      lastError = null;
      options.onPass?.(last);
      return last;
    } catch (error) {
      lastError = error instanceof Error ? error : new Error(String(error));
      options.onError?.(lastError);
      return null;
    }
  };
  const stop = runEvery(run, options);
  return {
    lastPass: () => last,
    lastError: () => lastError,
    passNow: () => {
      const result = run();
      if (!result) throw lastError;
      return result;
    },
    stop,
  };
}
