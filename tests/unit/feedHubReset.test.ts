import fs from "node:fs";
import path from "node:path";
import { createParser } from "eventsource-parser";
import { expect, it } from "vitest";
import { readFeedEvent, type FeedEventName, type FeedEventPayloads } from "../../lib/dashboard/feedEvents";
import { FeedHub } from "../../lib/dashboard/feedHub";
import { aRecording } from "../helpers/stateDir";

it("a stream open while the index is rebuilt gets reset with the new index's counts, as a stream that resumes from the old one does", async () => {
  const { tracker, reader, upkeep } = aRecording();
  tracker.create({ requestId: "kept", workspace: "gateway", state: "queued" });
  const oldGeneration = reader.generation();
  const hub = new FeedHub(reader, { pollMs: 10 });
  const resets: { id?: string; data: FeedEventPayloads["reset"] }[] = [];
  let resetCame = () => {};
  const came = new Promise<void>((resolve) => (resetCame = resolve));
  const parser = createParser({
    onEvent: (message) => {
      const event = readFeedEvent(message.event as FeedEventName, message.data);
      if (event.event !== "reset") return;
      resets.push({ id: message.id, data: event.data });
      resetCame();
    },
  });
  try {
    hub.subscribe(null, (chunk) => parser.feed(chunk));
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(reader.stateDir.root, `index.db${suffix}`), { force: true });
    expect(upkeep.checkIndex().reopened).toBe(true);
    await came;
    expect(resets).toHaveLength(1);
    expect(resets[0]!.data).toMatchObject({ reason: "the index was rebuilt", generation: reader.generation(), counts: { queued: 1 } });
    expect(resets[0]!.data.generation).not.toBe(oldGeneration);
    expect(resets[0]!.id).toBe(`${reader.generation()}:${resets[0]!.data.seq}`);
  } finally {
    hub.close();
  }
});
