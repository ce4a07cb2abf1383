import type { MonitorPass } from "./monitorPass";
import type { RetentionRun } from "../db/retentionRuns";
import { runEvery, type IntervalOptions } from "../process/interval";

/** How often the monitor runs the retention, beside its passes. */
export const RETENTION_INTERVAL_MS = 10 * 60 * 1000;

export interface MonitorHandle {
  /** The latest pass, or null before the first. */
  lastPass(): MonitorPass | null;
  /** The error of the latest pass, if it failed (the monitor keeps running). */
  lastError(): Error | null;
  /** Run a pass now (also resets nothing: the interval keeps its rhythm). */
  passNow(): MonitorPass;
  stop(): void;
}

interface MonitorLoopOptions extends IntervalOptions {
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

export interface RetentionHandle {
  /** Run now, or wait for the run under way. */
  runNow(): Promise<RetentionRun | null>;
  stop(): void;
}

interface RetentionLoopOptions extends IntervalOptions {
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

export interface MonitorOptions extends MonitorLoopOptions {
  /** Also run the retention, now and every RETENTION_INTERVAL_MS, on a managed folder. Default true. */
  retention: boolean;
  /** Called after every retention run (a run that failed says so in its `error`). */
  onRetention: (run: RetentionRun) => void;
  /** Called when a run could not even be recorded (its archive unwritable). */
  onRetentionError: (error: Error) => void;
}

export interface MonitorWithRetention extends MonitorHandle {
  /** The retention the monitor runs beside its passes; null when it does not (an observed folder, retention off, `retention: false`). */
  retention: RetentionHandle | null;
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
    ? startRetentionLoop(retention, { intervalMs: RETENTION_INTERVAL_MS, keepAlive: loopOptions.keepAlive, startAfter: loopOptions.startAfter, onRun: onRetention, onError: onRetentionError })
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
