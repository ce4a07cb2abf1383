// The time axis of the charts, read as a clock in the viewer's own zone (the browser's): 14:05, and
// the day too when the range runs over midnight (under the first time of each day).

const two = (n: number) => String(n).padStart(2, "0");

/** A day's name as the axis writes it: `Nov 28`. */
const dayOf = (at: Date) => at.toLocaleDateString("en-US", { month: "short", day: "numeric" });

/** Whether `from` and `to` fall on different days in the viewer's zone. */
export function spansDays(from: number, to: number): boolean {
  return new Date(from).toDateString() !== new Date(to).toDateString();
}

/**
 * The axis's labels for its ticks (epoch ms): `HH:MM` in 24 hours; over a range that spans days, the
 * first tick and the first of each later day carry the day on a second line (`00:00\nNov 29`).
 */
export function clockLabels(ticks: readonly number[], withDays: boolean): string[] {
  let day = "";
  return ticks.map((tick) => {
    const at = new Date(tick);
    const time = `${two(at.getHours())}:${two(at.getMinutes())}`;
    if (!withDays || at.toDateString() === day) return time;
    day = at.toDateString();
    return `${time}\n${dayOf(at)}`;
  });
}

/** A point's time as the readout says it, on the axis's clock: `14:05`, or `Nov 28 14:05` for a point an hour or longer. */
export function clockPoint(at: number, pointMs: number): string {
  const when = new Date(at);
  const time = `${two(when.getHours())}:${two(when.getMinutes())}`;
  return pointMs >= 3_600_000 ? `${dayOf(when)} ${time}` : time;
}
