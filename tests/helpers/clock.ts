/** A clock the test moves by hand, so times and thresholds are exact. */
export function aClock(start = Date.now()) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms), set: (ms: number) => (now = ms) };
}
