import { describe, expect, it } from "vitest";
import { formatAgo, formatDuration, parseDuration } from "../../lib/model/duration";

describe("durations as a person reads them", () => {
  it("are the largest two units, and never negative: a time read just before another program's write is 0ms", () => {
    expect(formatDuration(5_400_000 + 12_000)).toBe("1h 30m");
    expect(formatDuration(45_000)).toBe("45s");
    expect(formatDuration(250)).toBe("250ms");
    expect(formatDuration(-27)).toBe("0ms");
    expect(formatAgo(1000, 973)).toBe("0ms ago");
  });

  it("a date reads as how long ago, or how soon when it is ahead (a deadline, a back-off)", () => {
    expect(formatAgo(0, 312_000)).toBe("5m 12s ago");
    expect(formatAgo(180_000, 0)).toBe("in 3m");
  });

  it("are read with their unit, and refused without one", () => {
    expect(parseDuration("15m")).toBe(900_000);
    expect(() => parseDuration("15")).toThrow(/A number needs its unit/);
  });
});
