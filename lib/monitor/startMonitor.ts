import type { MonitorPass } from "./monitorPass";

export interface MonitorHandle {
  /** The latest pass, or null before the first. */
  lastPass(): MonitorPass | null;
  /** The error of the latest pass, if it failed (the monitor keeps running). */
  lastError(): Error | null;
  /** Run a pass now (also resets nothing: the interval keeps its rhythm). */
  passNow(): MonitorPass;
  stop(): void;
}

export interface MonitorLoopOptions {
  intervalMs: number;
  /** Called after every pass. */
  onPass?: (pass: MonitorPass) => void;
  onError?: (error: Error) => void;
  /** Keep the process alive for the monitor (the `reqwatch monitor` command); a host process passes false. */
  keepAlive?: boolean;
  /**
   * The first pass waits for this to settle (the dashboard: its ingest's catch-up with the folder),
   * so it does not judge the index an earlier run left.
   */
  startAfter?: Promise<unknown>;
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
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const begin = () => {
    if (stopped) return;
    run();
    timer = setInterval(run, options.intervalMs);
    if (!options.keepAlive) timer.unref();
  };
  if (options.startAfter) void options.startAfter.then(begin, begin);
  else begin();
  return {
    lastPass: () => last,
    lastError: () => lastError,
    passNow: () => {
      const result = run();
      if (!result) throw lastError;
      return result;
    },
    stop: () => {
      stopped = true;
      if (timer) clearInterval(timer);
    },
  };
}
