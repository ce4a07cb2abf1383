import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { openTracker } from "../../lib/tracker";
import { expect, test } from "./fixtures";
import { changesIn, openEvents } from "../helpers/sse";

const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");

function sh(script: string, env: Record<string, string>): void {
  execFileSync("bash", ["-euc", script], { env: { ...process.env, ...env }, stdio: "pipe" });
}

test.describe("GET /api/events", () => {
  test("streams with headers that stop buffering, starting with where the feed is", async ({ app }) => {
    const stream = await openEvents(`${app.url}/api/events`);
    try {
      expect(stream.response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(stream.response.headers.get("cache-control")).toBe("no-cache, no-transform");
      expect(stream.response.headers.get("x-accel-buffering")).toBe("no");
      const ready = await stream.next((event) => event.event === "ready");
      expect(ready.id).toMatch(/^[0-9a-f-]{36}:\d+$/);
      expect(ready.data.counts).toMatchObject({ queued: 0 });
    } finally {
      stream.close();
    }
  });

  test("a shell hook's write and another process's write arrive, with the row to show", async ({ app, stateDir, tracker }) => {
    tracker.create({ requestId: "hooked", workspace: "gw", state: "processing" });
    const stream = await openEvents(`${app.url}/api/events`);
    try {
      await stream.next((event) => event.event === "ready");
      sh(
        `tmp=$(mktemp "$DIR/requests/XXXXXX.tmp")
         jq '.callback = {success: true, attempts: 1, retryTimestamps: []} | .lastUpdatedAt = (now * 1000 | floor)' "$DIR/requests/hooked.json" > "$tmp"
         mv "$tmp" "$DIR/requests/hooked.json"`,
        { DIR: stateDir },
      );
      const hooked = await stream.next((event) => event.event === "changes" && changesIn([event]).some((c) => c.requestId === "hooked"));
      expect(changesIn([hooked])[0]).toMatchObject({ kind: "request.upserted", requestId: "hooked", request: { state: "processing", workspace: "gw" } });

      execFileSync(process.execPath, [BIN, "create", "--workspace", "cli", "--id", "from-cli", "--state", "queued"], { env: { ...process.env, REQWATCH_STATE_DIR: stateDir } });
      const created = await stream.next((event) => event.event === "changes" && changesIn([event]).some((c) => c.requestId === "from-cli"));
      expect(changesIn([created]).find((c) => c.requestId === "from-cli")?.request).toMatchObject({ state: "queued", workspace: "cli", version: 1 });
      const counts = await stream.next((event) => event.event === "counts");
      expect(counts.data.counts).toMatchObject({ queued: 1, processing: 1 });
    } finally {
      stream.close();
    }
  });

  test("a dropped connection resumed with Last-Event-ID gets exactly the missed changes", async ({ app, tracker }) => {
    const first = await openEvents(`${app.url}/api/events`);
    await first.next((event) => event.event === "ready");
    for (let i = 0; i < 3; i++) tracker.create({ requestId: `before-${i}`, workspace: "gw" });
    const seen = await first.until((events) => changesIn(events).length === 3);
    const lastId = seen.filter((event) => event.id).at(-1)!.id!;
    first.close();

    for (let i = 0; i < 5; i++) tracker.create({ requestId: `missed-${i}`, workspace: "gw" });
    const resumed = await openEvents(`${app.url}/api/events`, { "Last-Event-ID": lastId });
    try {
      await resumed.until((events) => changesIn(events).length >= 5);
      tracker.create({ requestId: "live", workspace: "gw" });
      const all = await resumed.until((events) => changesIn(events).length >= 6);
      expect(changesIn(all).map((c) => c.requestId)).toEqual(["missed-0", "missed-1", "missed-2", "missed-3", "missed-4", "live"]);
      const seqs = changesIn(all).map((c) => c.seq);
      expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
      expect(seqs[0]).toBe(Number(lastId.split(":")[1]) + 1);
    } finally {
      resumed.close();
    }
  });

  test("a resume point from before the index was rebuilt gets reset", async ({ stateDir, launchApp }) => {
    const before = openTracker({ stateDir });
    before.create({ requestId: "kept", workspace: "gw" });
    const oldId = `${before.generation()}:${before.feedHead().lastSeq}`;
    before.close();
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });

    const app = await launchApp();
    const stream = await openEvents(`${app.url}/api/events`, { "Last-Event-ID": oldId });
    try {
      const reset = await stream.next();
      expect(reset).toMatchObject({ event: "reset", data: { reason: "the index was rebuilt" } });
      expect(reset.id).not.toBe(oldId);
      expect(reset.data.counts).toMatchObject({ created: 1 });
      const garbage = await openEvents(`${app.url}/api/events?since=not-an-id`);
      expect((await garbage.next()).event).toBe("reset");
      garbage.close();
    } finally {
      stream.close();
    }
  });

  test("a burst of 500 files is fully indexed and delivered in a few batches", async ({ app, stateDir }) => {
    const stream = await openEvents(`${app.url}/api/events`);
    try {
      await stream.next((event) => event.event === "ready");
      sh(
        `for i in $(seq 1 500); do
           printf '{"requestId":"burst%s","workspace":"burst","state":"queued","createdAt":1,"lastUpdatedAt":1}' "$i" > "$DIR/requests/.burst$i.tmp"
           mv "$DIR/requests/.burst$i.tmp" "$DIR/requests/burst$i.json"
         done`,
        { DIR: stateDir },
      );
      const events = await stream.until((all) => new Set(changesIn(all).map((c) => c.requestId)).size === 500, 20_000);
      expect(changesIn(events)).toHaveLength(500);
      // Coalesced: a handful of batches, not one event per file.
      expect(events.filter((event) => event.event === "changes").length).toBeLessThan(40);
    } finally {
      stream.close();
    }
  });

  test("an unreadable file is reported and does not stop the stream", async ({ app, stateDir, request }) => {
    const stream = await openEvents(`${app.url}/api/events`);
    try {
      await stream.next((event) => event.event === "ready");
      fs.writeFileSync(path.join(stateDir, "requests", "broken.json"), "{ this is not json");
      fs.writeFileSync(path.join(stateDir, "requests", "fine.json"), JSON.stringify({ requestId: "fine", workspace: "gw", state: "queued", createdAt: 1, lastUpdatedAt: 1 }));
      await stream.next((event) => event.event === "changes" && changesIn([event]).some((c) => c.requestId === "fine"));
      await expect.poll(async () => (await (await request.get("/api/health")).json()).unreadableFiles).toBe(1);
    } finally {
      stream.close();
    }
  });

  test("500 connect/disconnect cycles leave no subscriber or handle behind", async ({ app, request }) => {
    const health = async () => (await (await request.get("/api/health")).json()) as { feed: { subscribers: number }; activeResources: number };
    const before = await health();
    for (let i = 0; i < 500; i++) {
      const stream = await openEvents(`${app.url}/api/events`);
      await stream.next();
      stream.close();
    }
    await expect.poll(async () => (await health()).feed.subscribers).toBe(before.feed.subscribers);
    await expect.poll(async () => (await health()).activeResources, { timeout: 10_000 }).toBeLessThanOrEqual(before.activeResources);
  });
});
