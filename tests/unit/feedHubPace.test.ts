import { afterEach, expect, it, vi } from "vitest";
import { FeedHub } from "../../lib/dashboard/feedHub";
import { aRecording } from "../helpers/stateDir";

// How long a batch holds the next back: a few changes (the retention's removals, a step at a time)
// a few ms, so a live change behind them is not kept 250 ms; a burst the whole batch interval.
// On fake timers: each step below is a moment of the hub's own clock, not the machine's pace.
afterEach(() => vi.useRealTimers());

/** The request ids of each `changes` event in `chunks`. */
const batches = (chunks: string[]) =>
  chunks
    .flatMap((chunk) => chunk.split("\n\n"))
    .filter((event) => event.split("\n").includes("event: changes"))
    .map((event) => (JSON.parse(event.slice(event.indexOf("data: ") + 6)) as { changes: { requestId: string }[] }).changes.map((c) => c.requestId));

it("after a batch of a few changes the next goes out within ms; after a burst, only once the batch interval has passed", async () => {
  vi.useFakeTimers({ toFake: ["setTimeout", "setInterval", "clearTimeout", "clearInterval", "Date"] });
  const { tracker, reader } = aRecording();
  const hub = new FeedHub(reader, { pollMs: 10, batchMs: 250 });
  const chunks: string[] = [];
  try {
    hub.subscribe(null, (chunk) => chunks.push(chunk));
    tracker.create({ requestId: "first", workspace: "w" });
    await vi.advanceTimersByTimeAsync(10);
    tracker.create({ requestId: "second", workspace: "w" });
    await vi.advanceTimersByTimeAsync(20);
    expect(batches(chunks)).toEqual([["first"], ["second"]]);

    const burst = Array.from({ length: 200 }, (_, i) => `burst${i}`);
    for (const requestId of burst) tracker.create({ requestId, workspace: "w" });
    await vi.advanceTimersByTimeAsync(20);
    expect(batches(chunks).at(-1)).toEqual(burst);
    tracker.create({ requestId: "behind", workspace: "w" });
    await vi.advanceTimersByTimeAsync(200);
    expect(batches(chunks).flat()).not.toContain("behind");
    await vi.advanceTimersByTimeAsync(60);
    expect(batches(chunks).at(-1)).toEqual(["behind"]);
  } finally {
    hub.close();
    tracker.close();
  }
});
