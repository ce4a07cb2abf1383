import type { MonitorHandle, MonitorLoopOptions, MonitorOptions, MonitorPass, MonitorWithRetention, RetentionHandle, RetentionRun } from "../types";
import { runEvery, type IntervalOptions } from "../process/interval";

/** How often the monitor runs the retention, beside its passes. */
export const RETENTION_INTERVAL_MS = 10 * 60 * 1000;

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

export interface RetentionLoopOptions extends IntervalOptions {
  onRun?: (run: RetentionRun) => void;
  onError?: (error: Error) => void;
}

/**
 * Run the retention now and every `intervalMs` in a long-lived process (started with the
 * monitor). One run at a time; a failed run is recorded with its error and the loop goes on.
 */
function startRetentionLoop(run: () => Promise<RetentionRun | null>, options: RetentionLoopOptions): RetentionHandle {
  let current: Promise<RetentionRun | null> | null = null;
  const runNow = (): Promise<RetentionRun | null> =>
    (current ??= run()
      .then((result) => {
        if (result) options.onRun?.(result);
        return result;
      })
      .catch((error: Error) => {
        options.onError?.(error);
        return null;
      })
      .finally(() => {
        current = null;
      }));
  return { runNow, stop: runEvery(() => void runNow(), options) };
}

/**
 * The monitor's two periodic jobs, started and stopped together: a pass every `intervalMs`, and
 * `retention`'s run (null: none) every RETENTION_INTERVAL_MS, both kept alive and delayed alike.
 */
export function startMonitorWithRetention(
  pass: () => MonitorPass,
  retention: (() => Promise<RetentionRun | null>) | null,
  options: MonitorLoopOptions & Partial<Pick<MonitorOptions, "onRetention" | "onRetentionError">>,
): MonitorWithRetention {
  const { onRetention, onRetentionError, ...loopOptions } = options;
  const loop = startMonitorLoop(pass, loopOptions);
  const retentionLoop = retention
    ? startRetentionLoop(retention, {
        intervalMs: RETENTION_INTERVAL_MS,
        keepAlive: loopOptions.keepAlive,
        startAfter: loopOptions.startAfter,
        onRun: onRetention,
        onError: onRetentionError,
      })
    : null;
  return {
    ...loop,
    retention: retentionLoop,
    stop() {
      loop.stop();
      retentionLoop?.stop();
    },
  };
}
