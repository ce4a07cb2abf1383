import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { aRecording, aTracker, tempForeignDir, tempParent } from "../helpers/stateDir";
import { RETENTION_HOLDER } from "../../lib/actions/retention";
import { RETENTION_INTERVAL_MS } from "../../lib/monitor/startMonitor";
import { processStartedAt } from "../../lib/process/liveness";
import type { Reader } from "../../lib/roles/reader";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A tracker on a fake clock: `clock.at` is now. */
function onClock(options: Parameters<typeof aTracker>[0] = {}) {
  const clock = { at: Date.UTC(2026, 10, 1) };
  return { clock, ...aRecording({ now: () => clock.at, ...options }) };
}

function finish(tracker: ReturnType<typeof aTracker>, id: string, to: "completed" | "failed" = "completed") {
  tracker.create({ requestId: id, workspace: "w", state: "processing" });
  tracker.transition(id, to, to === "failed" ? { fields: { error: "boom" } } : {});
}

const files = (reader: Reader) =>
  fs
    .readdirSync(reader.stateDir.requestsDir)
    .filter((f) => f.endsWith(".json"))
    .sort();

afterEach(() => vi.useRealTimers());

describe("the monitor's retention", () => {
  it("archives and removes exactly the finished requests past it, audited by retention, and can be undone", async () => {
    const { clock, tracker, reader, operator } = onClock();
    finish(tracker, "old-done");
    finish(tracker, "old-failed", "failed");
    tracker.create({ requestId: "old-queued", workspace: "w", state: "queued" });
    clock.at += DAY;
    finish(tracker, "edge");
    clock.at += 1;
    finish(tracker, "young");
    clock.at += DAY - 1; // "edge" finished exactly 24 h ago (it goes), "young" 1 ms less (it stays)

    const run = await operator.runRetention();
    expect(run).toMatchObject({ removed: 3, skipped: 0, archiveDropped: 0, error: null });
    expect(files(reader)).toEqual(["old-queued.json", "young.json"]);
    const entry = operator.actions.entry(run!.entryId!);
    expect(entry).toMatchObject({ kind: "cleanup", by: "retention", status: "done", changed: 3 });
    expect([...entry.changedIds].sort()).toEqual(["edge", "old-done", "old-failed"]);
    expect(reader.retention()).toMatchObject({ active: true, retentionMs: DAY, latest: { removed: 3 }, lastRemoval: { entryId: entry.id } });

    // Nothing more past it: a run removes nothing and writes no audit entry.
    const again = await operator.runRetention();
    expect(again).toMatchObject({ removed: 0, entryId: null });
    expect(operator.actions.list().filter((e) => e.by === "retention")).toHaveLength(1);
    expect(reader.retention().lastRemoval?.entryId).toBe(entry.id);

    await operator.actions.undo(entry.id, { by: "test" });
    expect(files(reader)).toEqual(["edge.json", "old-done.json", "old-failed.json", "old-queued.json", "young.json"]);
    expect(tracker.get("old-failed")).toMatchObject({ state: "failed", error: "boom" });
  });

  it("drops archived requests and finished audit entries past the archive's retention", async () => {
    const { clock, tracker, operator } = onClock({ retentionMs: HOUR, archiveRetentionMs: 30 * DAY });
    finish(tracker, "a");
    clock.at += 2 * HOUR;
    const first = await operator.runRetention();
    expect(first?.removed).toBe(1);
    finish(tracker, "b");
    clock.at += 29 * DAY;
    expect((await operator.runRetention())?.archiveDropped).toBe(0);
    expect(operator.actions.list().some((e) => e.id === first!.entryId)).toBe(true);
    clock.at += 2 * DAY; // "a" was archived 31 days ago, "b" 29 days ago
    const late = await operator.runRetention();
    expect(late?.archiveDropped).toBe(1);
    expect(operator.actions.list().some((e) => e.id === first!.entryId)).toBe(false);
    expect(() => operator.restore("a")).toThrow(/not in the archive|does not exist|not found/i);
    expect(operator.restore("b").requestId).toBe("b");
  });

  it("keeps each archived copy of an id used again, and drops only the copies past the archive's retention", async () => {
    const { clock, tracker, operator } = onClock({ retentionMs: HOUR, archiveRetentionMs: 30 * DAY });
    tracker.create({ requestId: "reused", workspace: "w", state: "processing", prompt: "first" });
    tracker.transition("reused", "completed");
    clock.at += 2 * HOUR;
    const first = await operator.runRetention();
    clock.at += 20 * DAY;
    tracker.create({ requestId: "reused", workspace: "w", state: "processing", prompt: "second" });
    tracker.transition("reused", "completed");
    clock.at += 2 * HOUR;
    const second = await operator.runRetention();
    expect([first?.removed, second?.removed]).toEqual([1, 1]);

    clock.at += 11 * DAY; // the first copy was archived 31 days ago, the second 11
    expect((await operator.runRetention())?.archiveDropped).toBe(1);
    expect(operator.restore("reused")).toMatchObject({ prompt: "second" });
  });

  it("is off with REQWATCH_RETENTION=off, and reads the durations from the environment", async () => {
    process.env.REQWATCH_RETENTION = "off";
    process.env.REQWATCH_ARCHIVE_RETENTION = "7d";
    try {
      const { clock, tracker, operator, reader } = onClock();
      expect(tracker.options).toMatchObject({ retentionMs: null, archiveRetentionMs: 7 * DAY });
      finish(tracker, "kept");
      clock.at += 100 * DAY;
      expect(await operator.runRetention()).toMatchObject({ removed: 0, entryId: null });
      expect(files(reader)).toEqual(["kept.json"]);
      // A cleanup not told an age still uses the default 24 h.
      expect(operator.cleanup().archived).toBe(1);
    } finally {
      delete process.env.REQWATCH_RETENTION;
      delete process.env.REQWATCH_ARCHIVE_RETENTION;
    }
    expect(() => aTracker({ retentionMs: -1 })).toThrow(/retentionMs/);
  });

  it("never touches an observed folder: not started by the monitor, a run does nothing, every byte stays", async () => {
    const stateDir = tempForeignDir();
    for (let i = 0; i < 5; i++) writeRequestFile(stateDir, aRequest({ requestId: `f${i}`, state: "completed", createdAt: 1_000, lastUpdatedAt: 2_000 }));
    const before = snapshot(stateDir);
    const { tracker, reader, operator } = aRecording({ stateDir, cacheDir: tempParent() });
    expect(tracker.ownership.access).toBe("observed");
    const monitor = tracker.startMonitor();
    expect(monitor.retention).toBeNull();
    expect(await operator.runRetention()).toBeNull();
    expect(reader.retention()).toMatchObject({ active: false, inactiveReason: expect.stringMatching(/observed/) });
    monitor.stop();
    tracker.close();
    expect(snapshot(stateDir)).toEqual(before);
  });

  it("runs in one process at a time: while another live process holds the folder's retention, a run does nothing", async () => {
    const { clock, tracker, reader, operator } = onClock();
    finish(tracker, "x");
    clock.at += 2 * DAY;
    const other = spawn("sleep", ["30"]);
    try {
      const holder = { pid: other.pid!, host: os.hostname(), processStartedAt: processStartedAt(other.pid!) };
      fs.writeFileSync(path.join(reader.stateDir.storeDir, RETENTION_HOLDER), JSON.stringify(holder));
      expect(await operator.runRetention()).toBeNull();
      expect(files(reader)).toEqual(["x.json"]);
    } finally {
      other.kill("SIGKILL");
      await new Promise((resolve) => other.once("exit", resolve));
    }
    // Its holder gone, the next run takes the folder's retention, and gives it back after.
    expect(await operator.runRetention()).toMatchObject({ removed: 1 });
    expect(fs.existsSync(path.join(reader.stateDir.storeDir, RETENTION_HOLDER))).toBe(false);
  });

  it("runs with the monitor: now, then every RETENTION_INTERVAL_MS, and stops with it", async () => {
    // Only the intervals are moved by hand: a run's own pauses and turns keep their real timers.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const { clock, tracker, reader } = onClock({ monitorIntervalMs: 7 * DAY });
    finish(tracker, "x");
    clock.at += 2 * DAY;
    const runs: number[] = [];
    let ran!: () => void;
    const nextRun = () => new Promise<void>((resolve) => (ran = resolve));
    const timersBefore = vi.getTimerCount();
    const first = nextRun();
    const monitor = tracker.startMonitor({ onRetention: (run) => (runs.push(run.removed), ran()) });
    expect(monitor.retention).not.toBeNull();
    await first;
    expect(runs).toEqual([1]);
    expect(files(reader)).toEqual([]);

    // The next run is the schedule's, when its interval comes round.
    finish(tracker, "y");
    clock.at += 2 * DAY;
    const second = nextRun();
    await vi.advanceTimersByTimeAsync(RETENTION_INTERVAL_MS);
    await second;
    expect(runs).toEqual([1, 1]);
    expect(files(reader)).toEqual([]);

    // Stopped with the monitor: neither job keeps a timer.
    monitor.stop();
    expect(vi.getTimerCount()).toBe(timersBefore);
  });

  it("stops quietly when the tracker closes before its first run got a turn", async () => {
    // Nothing past it: the run goes straight to the archive's retention, which yields once.
    const { tracker } = onClock();
    const heard: string[] = [];
    const monitor = tracker.startMonitor({
      onRetention: (run) => heard.push(`run ${run.removed}`),
      onRetentionError: (error) => heard.push(error.message),
      onError: (error) => heard.push(error.message),
    });
    tracker.close();
    // The run under way, waited for to its end (runNow joins it): it ended as nothing, and said nothing.
    expect(await monitor.retention!.runNow()).toBeNull();
    expect(heard).toEqual([]);
  });
});

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, full)] = entry.isFile() ? fs.readFileSync(full, "base64") : "dir";
  }
  return out;
}
