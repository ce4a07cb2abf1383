import { expect, it } from "vitest";
import { FeedHub } from "../../lib/dashboard/feedHub";
import { aRecording } from "../helpers/stateDir";

/** The queues each `queues` event in `chunks` carried, as workspace: status. */
function queueStatuses(chunks: string[]): string[][] {
  return chunks
    .flatMap((chunk) => chunk.split("\n\n"))
    .filter((event) => event.startsWith("event: queues"))
    .map((event) =>
      (JSON.parse(event.slice(event.indexOf("data: ") + 6)) as { queues: { workspace: string; status: string }[] }).queues.map(
        (row) => `${row.workspace}: ${row.status}`,
      ),
    );
}

it("a monitor pass that finds a processing request stuck sends the queues again, with that queue stuck", () => {
  const { tracker, reader } = aRecording();
  tracker.create({ requestId: "job", workspace: "gateway", state: "processing" });
  const hub = new FeedHub(reader);
  const chunks: string[] = [];
  try {
    hub.subscribe(null, (chunk) => chunks.push(chunk));
    const stuck = {
      requestId: "job",
      workspace: "gateway",
      state: "processing" as const,
      since: Date.now(),
      cause: "no heartbeat" as const,
      reason: "processing 2h; no heartbeat",
    };
    hub.publishStuck([stuck], Date.now());
    expect(queueStatuses(chunks)).toEqual([["gateway: stuck"]]);
    // The same finding again changes nothing, and sends nothing.
    hub.publishStuck([stuck], Date.now());
    expect(queueStatuses(chunks)).toHaveLength(1);
  } finally {
    hub.close();
  }
});

it("a stuck request that another program finishes leaves the stuck count with that change, not at the next monitor pass", async () => {
  const { tracker, reader, operator } = aRecording();
  for (const requestId of ["a", "b", "c"]) tracker.create({ requestId, workspace: "gateway", state: "processing" });
  const hub = new FeedHub(reader, { pollMs: 10, batchMs: 0 });
  const stuckEvents: number[] = [];
  try {
    hub.subscribe(null, (chunk) => {
      for (const event of chunk.split("\n\n").filter((text) => text.startsWith("event: stuck")))
        stuckEvents.push((JSON.parse(event.slice(event.indexOf("data: ") + 6)) as { count: number }).count);
    });
    const at = Date.now();
    hub.publishStuck(
      ["a", "b", "c"].map((requestId) => ({
        requestId,
        workspace: "gateway",
        state: "processing" as const,
        since: at,
        cause: "no heartbeat" as const,
        reason: "processing 2h; no heartbeat",
      })),
      at,
    );
    expect(hub.stuckSnapshot.count).toBe(3);
    // A heartbeat (still processing) keeps it stuck; a timeout and a removal take it out.
    tracker.update("a", { fields: { model: "still going" } });
    operator.cancel(["b"]);
    await expect.poll(() => hub.stuckSnapshot.count).toBe(2);
    expect(hub.stuckSnapshot.requests.map((request) => request.requestId)).toEqual(["a", "c"]);
    expect(stuckEvents.at(-1)).toBe(2);
  } finally {
    hub.close();
  }
});
