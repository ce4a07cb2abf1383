import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { FeedEventName, FeedEventPayloads } from "../../lib/dashboard/feedEvents";
import { aDashboard } from "../helpers/dashboard";
import { eventually } from "../helpers/processes";
import { changesIn } from "../helpers/sse";
import { aRecording, tempStateDir } from "../helpers/stateDir";

const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");

function sh(script: string, env: Record<string, string>): void {
  execFileSync("bash", ["-euc", script], { env: { ...process.env, ...env }, stdio: "pipe" });
}

type Health = {
  unreadableFiles: number;
  feed: { subscribers: number };
  activeResources: number;
  monitor: { intervalMs: number; lastError: string | null; lastPassAt: number };
};

/** The dashboard on a fresh state directory, and a second opening of it: another writer, with its own connection to the index. */
async function aDashboardAndAWriter(options: Parameters<typeof aDashboard>[0] = {}) {
  const stateDir = tempStateDir();
  const dashboard = await aDashboard({ ...options, stateDir });
  return { ...dashboard, stateDir, writer: aRecording({ stateDir }), health: async () => (await dashboard.ask("/api/health")).json<Health>() };
}

describe("the dashboard's event stream", () => {
  it("streams with headers that stop buffering, starting with where the feed is", async () => {
    const { stream } = await aDashboardAndAWriter();
    const events = await stream();
    expect(events.response.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(events.response.headers.get("x-accel-buffering")).toBe("no");
    const ready = await events.next("ready");
    expect(ready.id).toMatch(/^[0-9a-f-]{36}:\d+$/);
    // Typed as the browser reads them: waiting for a name or reading a field the stream does not send does not compile.
    expectTypeOf(events.next).parameter(0).toEqualTypeOf<FeedEventName | undefined>();
    expectTypeOf(ready.data).toEqualTypeOf<FeedEventPayloads["ready"]>();
  });

  it("a shell hook's write and another process's write arrive, with the row to show", async () => {
    const { stream, stateDir, writer } = await aDashboardAndAWriter();
    writer.tracker.create({ requestId: "hooked", workspace: "gw", state: "processing" });
    const events = await stream();
    await events.next("ready");
    sh(
      `tmp=$(mktemp "$DIR/requests/XXXXXX.tmp")
       jq '.callback = {success: true, attempts: 1, retryTimestamps: []} | .lastUpdatedAt = (now * 1000 | floor)' "$DIR/requests/hooked.json" > "$tmp"
       mv "$tmp" "$DIR/requests/hooked.json"`,
      { DIR: stateDir },
    );
    const hooked = await events.next("changes", (event) => event.data.changes.some((c) => c.requestId === "hooked"));
    expect(hooked.data.changes[0]).toMatchObject({ kind: "request.upserted", requestId: "hooked", request: { state: "processing", workspace: "gw" } });

    execFileSync(process.execPath, [BIN, "create", "--workspace", "cli", "--id", "from-cli", "--state", "queued"], {
      env: { ...process.env, REQWATCH_STATE_DIR: stateDir },
    });
    const created = await events.next("changes", (event) => event.data.changes.some((c) => c.requestId === "from-cli"));
    expect(created.data.changes.find((c) => c.requestId === "from-cli")?.request).toMatchObject({ state: "queued", workspace: "cli", version: 1 });
    const counts = await events.next("counts");
    expect(counts.data.counts).toMatchObject({ queued: 1, processing: 1 });
  });

  it("a dropped connection resumed with Last-Event-ID gets exactly the missed changes", async () => {
    const { stream, writer } = await aDashboardAndAWriter();
    const first = await stream();
    await first.next("ready");
    for (let i = 0; i < 3; i++) writer.tracker.create({ requestId: `before-${i}`, workspace: "gw" });
    const seen = await first.until((events) => changesIn(events).length === 3);
    const lastId = seen.filter((event) => event.id).at(-1)!.id!;
    first.close();

    for (let i = 0; i < 5; i++) writer.tracker.create({ requestId: `missed-${i}`, workspace: "gw" });
    const resumed = await stream({ "Last-Event-ID": lastId });
    await resumed.until((events) => changesIn(events).length >= 5);
    writer.tracker.create({ requestId: "live", workspace: "gw" });
    const all = await resumed.until((events) => changesIn(events).length >= 6);
    expect(changesIn(all).map((c) => c.requestId)).toEqual(["missed-0", "missed-1", "missed-2", "missed-3", "missed-4", "live"]);
    const seqs = changesIn(all).map((c) => c.seq);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    expect(seqs[0]).toBe(Number(lastId.split(":")[1]) + 1);
  });

  it("a resume point from before the index was rebuilt gets reset", async () => {
    const stateDir = tempStateDir();
    const before = aRecording({ stateDir });
    before.tracker.create({ requestId: "kept", workspace: "gw" });
    const oldId = `${before.reader.generation()}:${before.reader.feedHead().lastSeq}`;
    before.close();
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });

    const { stream } = await aDashboard({ stateDir });
    const events = await stream({ "Last-Event-ID": oldId });
    const reset = await events.next();
    expect(reset).toMatchObject({ event: "reset", data: { reason: "the index was rebuilt", counts: { created: 1 } } });
    expect(reset.id).not.toBe(oldId);
    const garbage = await stream({}, "?since=not-an-id");
    expect((await garbage.next()).event).toBe("reset");
  });

  it("a burst of 500 files is fully indexed and delivered in a few batches", async () => {
    const { stream, stateDir } = await aDashboardAndAWriter();
    const events = await stream();
    await events.next("ready");
    sh(
      `for i in $(seq 1 500); do
         printf '{"requestId":"burst%s","workspace":"burst","state":"queued","createdAt":1,"lastUpdatedAt":1}' "$i" > "$DIR/requests/.burst$i.tmp"
         mv "$DIR/requests/.burst$i.tmp" "$DIR/requests/burst$i.json"
       done`,
      { DIR: stateDir },
    );
    const all = await events.until((arrived) => new Set(changesIn(arrived).map((c) => c.requestId)).size === 500, 20_000);
    expect(changesIn(all)).toHaveLength(500);
    // Coalesced: a handful of batches, not one event per file.
    expect(all.filter((event) => event.event === "changes").length).toBeLessThan(40);
  }, 30_000);

  it("an unreadable file is reported and does not stop the stream", async () => {
    const { stream, stateDir, health } = await aDashboardAndAWriter();
    const events = await stream();
    await events.next("ready");
    fs.writeFileSync(path.join(stateDir, "requests", "broken.json"), "{ this is not json");
    fs.writeFileSync(
      path.join(stateDir, "requests", "fine.json"),
      JSON.stringify({ requestId: "fine", workspace: "gw", state: "queued", createdAt: 1, lastUpdatedAt: 1 }),
    );
    await events.next("changes", (event) => event.data.changes.some((c) => c.requestId === "fine"));
    await expect.poll(async () => (await health()).unreadableFiles).toBe(1);
  });

  it("500 connect/disconnect cycles leave no subscriber or handle behind", async () => {
    const { stream, health } = await aDashboardAndAWriter();
    const before = await health();
    for (let i = 0; i < 500; i++) {
      const events = await stream();
      await events.next();
      events.close();
    }
    await expect.poll(async () => (await health()).feed.subscribers).toBe(before.feed.subscribers);
    // The sockets close as the server gets to them: on a busy machine that can take seconds, so the wait is the test's whole budget.
    // Counted as `before` was, with no timer of the test's own running: expect.poll's deadline is one, and the server (in this
    // process) counted it, one more than `before` whenever no passing resource (an Immediate) happened to be counted there.
    const settled = async () => ((await health()).activeResources <= before.activeResources ? true : undefined);
    await eventually(settled, 50_000).catch(() => {});
    expect((await health()).activeResources).toBeLessThanOrEqual(before.activeResources);
  }, 60_000);
});

describe("the dashboard's stuck monitor", () => {
  it("runs in the server: a dead worker's request is requeued while it runs", async () => {
    const { stateDir, writer, health } = await aDashboardAndAWriter({ heartbeatTimeoutMs: 1000, monitorIntervalMs: 200 });
    const deadPid = spawnSync("true").pid!;
    const claimedAt = Date.now();
    fs.writeFileSync(
      `${stateDir}/requests/orphan.json`,
      JSON.stringify({
        requestId: "orphan",
        workspace: "gateway",
        state: "processing",
        attempt: 1,
        createdAt: claimedAt - 1000,
        processingStartedAt: claimedAt,
        lastUpdatedAt: claimedAt,
        claim: { token: "t-orphan", pid: deadPid, claimedAt, heartbeatAt: claimedAt },
      }),
    );
    writer.operator.recover();

    // No one calls anything: the server's own monitor notices the silence and the dead pid.
    await expect.poll(() => writer.tracker.get("orphan")?.state, { timeout: 15_000 }).toBe("queued");
    expect(writer.tracker.get("orphan")?.transitions?.at(-1)).toMatchObject({
      by: "monitor",
      reason: `released: the worker's pid ${deadPid} is gone (attempt 1 of 3)`,
    });

    const monitor = (await health()).monitor;
    expect(monitor).toMatchObject({ intervalMs: 200, lastError: null });
    expect(monitor.lastPassAt).toBeGreaterThan(claimedAt);
  }, 30_000);
});
