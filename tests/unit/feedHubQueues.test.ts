import { expect, it } from "vitest";
import { FeedHub } from "../../lib/dashboard/feedHub";
import { aTracker } from "../helpers/stateDir";

/** The queues each `queues` event in `chunks` carried, as workspace: status. */
function queueStatuses(chunks: string[]): string[][] {
  return chunks
    .flatMap((chunk) => chunk.split("\n\n"))
    .filter((event) => event.startsWith("event: queues"))
    .map((event) => (JSON.parse(event.slice(event.indexOf("data: ") + 6)) as { queues: { workspace: string; status: string }[] }).queues.map((row) => `${row.workspace}: ${row.status}`));
}

it("a monitor pass that finds a processing request stuck sends the queues again, with that queue stuck", () => {
  const tracker = aTracker();
  tracker.create({ requestId: "job", workspace: "gateway", state: "processing" });
  const hub = new FeedHub(tracker);
  const chunks: string[] = [];
  try {
    hub.subscribe(null, (chunk) => chunks.push(chunk));
    const stuck = { requestId: "job", workspace: "gateway", state: "processing" as const, since: Date.now(), reason: "processing 2h; no heartbeat" };
    hub.publishStuck([stuck], Date.now());
    expect(queueStatuses(chunks)).toEqual([["gateway: stuck"]]);
    // The same finding again changes nothing, and sends nothing.
    hub.publishStuck([stuck], Date.now());
    expect(queueStatuses(chunks)).toHaveLength(1);
  } finally {
    hub.close();
  }
});
