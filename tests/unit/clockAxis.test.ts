import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clockLabels, clockPoint, spansDays } from "../../components/charts/clockAxis";

// The charts' time axis in the viewer's own zone: here India's (UTC+5:30), whose half hour shows
// that the labels are the zone's clock and not UTC's.
let zone: string | undefined;
beforeEach(() => {
  zone = process.env.TZ;
  process.env.TZ = "Asia/Kolkata";
});
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

const at = (iso: string) => Date.parse(iso);

describe("the charts' time axis", () => {
  it("reads HH:MM on the viewer's clock within a day", () => {
    const ticks = [at("2026-11-28T08:00:00Z"), at("2026-11-28T08:15:00Z"), at("2026-11-28T08:30:00Z")];
    expect(spansDays(ticks[0]!, ticks[2]!)).toBe(false);
    expect(clockLabels(ticks, false)).toEqual(["13:30", "13:45", "14:00"]);
  });

  it("over midnight, says the day under the first time and under the first of the next day", () => {
    const ticks = [at("2026-11-28T16:30:00Z"), at("2026-11-28T17:30:00Z"), at("2026-11-28T18:30:00Z"), at("2026-11-28T19:30:00Z")];
    expect(spansDays(ticks[0]!, ticks[3]!)).toBe(true);
    expect(clockLabels(ticks, true)).toEqual(["22:00\nNov 28", "23:00", "00:00\nNov 29", "01:00"]);
  });

  it("the readout says a point's time on the same clock: HH:MM, with the day for points an hour or longer", () => {
    expect(clockPoint(at("2026-11-28T09:05:00Z"), 60_000)).toBe("14:35");
    expect(clockPoint(at("2026-11-28T19:00:00Z"), 3_600_000)).toBe("Nov 29 00:30");
  });
});
