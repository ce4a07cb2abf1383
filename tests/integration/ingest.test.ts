import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { aGatewayRequest, writeRequestFile } from "../helpers/builders";
import { eventually } from "../helpers/processes";
import { aRecording, aTracker, requestPath, tempStateDir } from "../helpers/stateDir";

function sh(script: string, env: Record<string, string> = {}): void {
  execFileSync("bash", ["-euc", script], { env: { ...process.env, ...env }, stdio: "pipe" });
}

function watched(options: Parameters<typeof aTracker>[0] = {}) {
  const stateDir = tempStateDir();
  const recording = aRecording({ stateDir, ...options });
  const ingest = recording.upkeep.startIngest({ reconcileEveryMs: 60_000 });
  return { stateDir, ...recording, ingest };
}

/**
 * A foreign writer's file written after everything the test did: the watcher reports the folder's
 * events in order, so once this file is in the index every earlier write has been through ingest.
 */
async function watcherCaughtUp(stateDir: string, tracker: ReturnType<typeof aTracker>): Promise<void> {
  writeRequestFile(stateDir, aGatewayRequest("sentinel"));
  await eventually(() => tracker.get("sentinel") ?? undefined);
}

describe("ingest of writers that are not ours", () => {
  it("picks up a gateway's stop hook (jq > tmp && mv) as one change", async () => {
    const { stateDir, tracker, ingest, reader } = watched();
    tracker.create({ requestId: "hooked", workspace: "gw", state: "processing" });
    const seqBefore = reader.feedHead().lastSeq;

    sh(
      `tmpfile=$(mktemp "$DIR/requests/XXXXXX.tmp")
       jq --argjson attempts 2 '.callback = {success: true, attempts: $attempts, retryTimestamps: ["2026-11-22T10:00:00Z"]} | .lastUpdatedAt = (now * 1000 | floor)' "$DIR/requests/hooked.json" > "$tmpfile"
       mv "$tmpfile" "$DIR/requests/hooked.json"`,
      { DIR: stateDir },
    );

    await eventually(() => (tracker.get("hooked")?.callback?.success ? true : undefined));
    const changes = reader.changesSince(seqBefore);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ kind: "request.upserted", requestId: "hooked" });
    expect(ingest.status()).toMatchObject({ mode: "watching", watcherError: null });
  });

  it("picks up cp, an editor's in-place save, and rm", async () => {
    const { stateDir, tracker, reader } = watched();
    const elsewhere = path.join(tempStateDir(), "gateway.json");
    fs.writeFileSync(elsewhere, JSON.stringify(aGatewayRequest("copied")));
    sh(`cp "$SRC" "$DIR/requests/copied.json"`, { SRC: elsewhere, DIR: stateDir });
    await eventually(() => tracker.get("copied") ?? undefined);

    const edited = { ...aGatewayRequest("copied"), model: "edited in vim", lastUpdatedAt: Date.now() };
    fs.writeFileSync(requestPath(stateDir, "copied"), JSON.stringify(edited, null, 2));
    await eventually(() => (tracker.get("copied")?.model === "edited in vim" ? true : undefined));

    sh(`rm "$DIR/requests/copied.json"`, { DIR: stateDir });
    await eventually(() => (tracker.get("copied") === null ? true : undefined));
    expect(reader.changesSince(0).at(-1)).toMatchObject({ kind: "request.removed", requestId: "copied" });
  });

  it("does not ingest our own writes a second time", async () => {
    const { stateDir, tracker, reader } = watched();
    const seqBefore = reader.feedHead().lastSeq;
    tracker.create({ requestId: "ours", workspace: "gw", state: "queued" });
    tracker.transition("ours", "processing");
    await watcherCaughtUp(stateDir, tracker);
    const ours = reader.changesSince(seqBefore).filter((c) => c.requestId === "ours");
    expect(ours.map((c) => c.request?.version)).toEqual([1, 2]);
  });

  it("shows a stale copy put back as the file now says, since every writer acts on the file", async () => {
    const { stateDir, tracker } = watched();
    tracker.create({ requestId: "v", workspace: "gw", state: "queued" });
    const old = fs.readFileSync(requestPath(stateDir, "v"), "utf8");
    tracker.transition("v", "processing");
    fs.writeFileSync(requestPath(stateDir, "v"), old); // a stale copy put back by some tool
    await eventually(() => (tracker.get("v")?.state === "queued" ? true : undefined));
    expect(tracker.get("v")).toEqual(JSON.parse(old));
    // The next write starts from the file, and the index follows it.
    tracker.transition("v", "processing");
    expect(tracker.get("v")).toEqual(JSON.parse(fs.readFileSync(requestPath(stateDir, "v"), "utf8")));
    expect(tracker.get("v")).toMatchObject({ state: "processing", version: 2 });
  });

  it("keeps an unreadable file's last good state, marked unreadable since when and why", async () => {
    const { stateDir, tracker, reader } = watched();
    tracker.create({ requestId: "fragile", workspace: "gw", state: "queued" });
    fs.writeFileSync(requestPath(stateDir, "fragile"), '{"requestId": "fragile", ');
    const entry = await eventually(() => reader.unreadableFiles()[0]);
    expect(entry).toMatchObject({ file: "requests/fragile.json", reason: expect.stringMatching(/^invalid JSON/), since: expect.any(Number) });
    expect(tracker.get("fragile")?.state).toBe("queued");
    writeRequestFile(stateDir, { ...JSON.parse(JSON.stringify(tracker.get("fragile"))), model: "fixed" });
    await eventually(() => (reader.unreadableFiles().length === 0 ? true : undefined));
    expect(tracker.get("fragile")?.model).toBe("fixed");
  });

  it("indexes a burst of 2,000 files from a shell loop, each exactly once", async () => {
    const { stateDir, reader } = watched();
    const seqBefore = reader.feedHead().lastSeq;
    sh(
      `for i in $(seq 1 2000); do
         printf '{"requestId":"b%s","workspace":"burst","state":"queued","createdAt":1,"lastUpdatedAt":1}' "$i" > "$DIR/requests/.b$i.tmp"
         mv "$DIR/requests/.b$i.tmp" "$DIR/requests/b$i.json"
       done`,
      { DIR: stateDir },
    );
    await eventually(() => (reader.countsByState({ workspace: "burst" }).queued === 2000 ? true : undefined), 20_000, 50);
    const changes = reader.changesSince(seqBefore, 10_000);
    expect(changes).toHaveLength(2000);
    expect(new Set(changes.map((c) => c.requestId)).size).toBe(2000);
  }, 60_000);

  it("counts what reconciliation had to fix behind the watcher's back", async () => {
    const stateDir = tempStateDir();
    const { tracker, upkeep } = aRecording({ stateDir });
    tracker.create({ requestId: "r", workspace: "gw" });
    const ingest = upkeep.startIngest({ reconcileEveryMs: 100 });
    // A periodic pass over a folder the watcher kept in line fixes nothing.
    const atStart = ingest.status().lastReconcile?.at ?? 0;
    await eventually(() => ((ingest.status().lastReconcile?.at ?? 0) > atStart ? true : undefined));
    expect(ingest.status().reconcileFixes).toBe(0);
    // Something the watcher cannot see: the index row vanishes.
    const { openIndex } = await import("../../lib/db/openIndex");
    const { db } = openIndex(path.join(stateDir, "index.db"));
    db.prepare("DELETE FROM requests WHERE id = 'r'").run();
    db.close();
    await eventually(() => (ingest.status().reconcileFixes === 1 ? true : undefined));
    expect(tracker.get("r")).not.toBeNull();
  });

  it("falls back to reconciliation alone when the watcher cannot start, and says so", async () => {
    const stateDir = tempStateDir();
    const { tracker, upkeep } = aRecording({ stateDir });
    fs.rmSync(path.join(stateDir, "requests"), { recursive: true });
    const ingest = upkeep.startIngest({ fallbackReconcileEveryMs: 100 });
    expect(ingest.status()).toMatchObject({ mode: "reconciling", watcherError: "there is no requests/ folder to watch yet" });
    fs.mkdirSync(path.join(stateDir, "requests"));
    writeRequestFile(stateDir, aGatewayRequest("late"));
    await eventually(() => tracker.get("late") ?? undefined);
  });
});
