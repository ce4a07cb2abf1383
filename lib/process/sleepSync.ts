const cell = new Int32Array(new SharedArrayBuffer(4));

/** Block this thread for `ms` (fractions allowed): a wait inside synchronous work, such as a lock's retry, where no event loop turn is possible. */
export function sleepSync(ms: number): void {
  Atomics.wait(cell, 0, 0, ms);
}
