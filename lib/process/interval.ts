export interface IntervalOptions {
  intervalMs: number;
  /** Keep the process alive for it (a command that only runs this); a host process passes false. */
  keepAlive?: boolean;
  /** The first run waits for this to settle, however it settles. */
  startAfter?: Promise<unknown>;
}

/** Run `tick` now (or once `startAfter` settles) and then every `intervalMs`; the function returned stops it, also before its first run. */
export function runEvery(tick: () => void, options: IntervalOptions): () => void {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const begin = () => {
    if (stopped) return;
    tick();
    timer = setInterval(tick, options.intervalMs);
    if (!options.keepAlive) timer.unref();
  };
  if (options.startAfter) void options.startAfter.then(begin, begin);
  else begin();
  return () => {
    stopped = true;
    if (timer) clearInterval(timer);
  };
}
