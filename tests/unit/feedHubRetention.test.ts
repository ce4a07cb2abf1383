import { expect, it } from "vitest";
import { FeedHub } from "../../lib/dashboard/feedHub";
import { aRecording } from "../helpers/stateDir";

it("the latest retention run reaches every subscriber, and each one that joins after it", () => {
  const hub = new FeedHub(aRecording().reader);
  const early: string[] = [];
  const late: string[] = [];
  try {
    hub.subscribe(null, (chunk) => early.push(chunk));
    hub.publishRetention({ finishedAt: 1_000, removed: 3 });
    // A page rendered while the run went on connects after it ended.
    hub.subscribe(null, (chunk) => late.push(chunk));
    const retention = (chunks: string[]) => chunks.filter((chunk) => chunk.includes("event: retention"));
    expect(retention(early)).toEqual([expect.stringContaining('data: {"finishedAt":1000,"removed":3}')]);
    expect(retention(late)).toEqual([expect.stringContaining('data: {"finishedAt":1000,"removed":3}')]);
  } finally {
    hub.close();
  }
});
