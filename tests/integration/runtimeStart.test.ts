import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openRuntime, type Runtime } from "../../lib/dashboard/runtime";
import { startMonitorLoop } from "../../lib/monitor/startMonitor";
import type { MonitorPass } from "../../lib/types";
import { aClaimedRequest, aRequest, writeRequestFile } from "../helpers/builders";
import { aDeadPid, eventually } from "../helpers/processes";
import { writeRequests } from "../helpers/requestFiles";
import { aTracker, requestPath, tempStateDir } from "../helpers/stateDir";

afterEach(() => vi.restoreAllMocks());

/** A turn of the event loop: every promise reaction queued before it has run. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Over the size from which the dashboard indexes, and catches up with, a folder in the background. */
const BIG = 2500;

/** A reqwatch worker's claim whose process is gone: the monitor's first pass releases it. */
function writeOrphan(stateDir: string): void {
  const claimedAt = Date.now() - 10 * 60 * 1000;
  writeRequestFile(stateDir, aClaimedRequest("orphaned", { token: "t", pid: aDeadPid(), claimedAt, heartbeatAt: claimedAt }));
}

async function withRuntime(stateDir: string, check: (runtime: Runtime) => Promise<void>): Promise<void> {
  // Retention off: the generated requests are weeks old, and this is about the start.
  const runtime = openRuntime({ stateDir, monitorIntervalMs: 60_000, retentionMs: null }, []);
  try {
    await check(runtime);
  } finally {
    runtime.close();
  }
}

describe("the dashboard's start on a big folder answers at once", () => {
  it("a restart: pages read the index kept until the catch-up with the folder ends; the monitor's first pass, and the overview's notice, come after it", async () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, BIG);
    aTracker({ stateDir }).close();
    // While no dashboard ran: a worker died holding a claim, and another program rewrote a request.
    writeOrphan(stateDir);
    const changed = JSON.parse(fs.readFileSync(requestPath(stateDir, "r00001"), "utf8")) as Record<string, unknown>;
    fs.writeFileSync(requestPath(stateDir, "r00001"), JSON.stringify({ ...changed, prompt: "rewritten while nobody watched" }));

    await withRuntime(stateDir, async (runtime) => {
      expect(runtime.ingest.caughtUp).not.toBeNull();
      expect(runtime.tracker.get("orphaned")).toBeNull();
      expect(runtime.tracker.get("r00001")?.prompt).toBe("prompt 1");
      expect(runtime.monitor.lastPass()).toBeNull();
      expect(runtime.recoveryNotice()).toBeNull();

      await runtime.ingest.caughtUp;
      expect(runtime.tracker.get("r00001")?.prompt).toBe("rewritten while nobody watched");
      await eventually(() => runtime.monitor.lastPass() ?? undefined);
      expect(runtime.tracker.get("orphaned")?.state).toBe("queued");
      expect(runtime.recoveryNotice()).toEqual({ total: 1, outcomes: { queued: ["orphaned"] } });
      expect(runtime.ingest.status().lastReconcile?.scanned).toBe(BIG + 1);
    });
  });

  it("a first open: the monitor's first pass waits for the index to be whole, so its notice names a dead worker's request found by the indexing", async () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, BIG);
    writeOrphan(stateDir);

    await withRuntime(stateDir, async (runtime) => {
      expect(runtime.indexing()).not.toBeNull();
      expect(runtime.monitor.lastPass()).toBeNull();
      await eventually(() => runtime.monitor.lastPass() ?? undefined);
      expect(runtime.indexing()).toBeNull();
      expect(runtime.tracker.get("orphaned")?.state).toBe("queued");
      expect(runtime.recoveryNotice()).toEqual({ total: 1, outcomes: { queued: ["orphaned"] } });
    });
  });

  it("a first open whose indexing fails (a full disk) says why, and tries again until it succeeds", async () => {
    const stateDir = tempStateDir();
    writeRequests(stateDir, BIG);
    const requestsDir = path.join(stateDir, "requests");
    const readdir = fs.readdirSync;
    let diskFull = true;
    vi.spyOn(fs, "readdirSync").mockImplementation(((dir: fs.PathLike, options?: { withFileTypes?: boolean }) => {
      if (diskFull && dir === requestsDir && options?.withFileTypes)
        throw Object.assign(new Error(`ENOSPC: no space left on device, scandir '${requestsDir}'`), { code: "ENOSPC" });
      return readdir(dir, options as never);
    }) as typeof fs.readdirSync);

    await withRuntime(stateDir, async (runtime) => {
      const failure = await eventually(() => runtime.indexing()?.failure ?? undefined);
      expect(failure).toEqual({ message: expect.stringContaining("ENOSPC: no space left on device"), retryInMs: 5000 });
      // The pages do not wait for a first batch that is not coming: it has settled before the next turn
      // of the event loop (a wait would take a timer's turn, however short). The monitor started after the first try.
      await expect(Promise.race([runtime.firstBatch().then(() => "settled"), nextTurn().then(() => "waiting")])).resolves.toBe("settled");
      expect(runtime.monitor.lastPass()).not.toBeNull();

      diskFull = false;
      await eventually(() => (runtime.indexing() === null ? true : undefined), 15_000, 100);
      expect(Object.values(runtime.reader.countsByState()).reduce((sum, n) => sum + n, 0)).toBe(BIG);
    });
  }, 30_000);

  it("a small folder is caught up with before the runtime opens, and the monitor's first pass is made then", async () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "small", state: "queued" }));
    writeOrphan(stateDir);
    await withRuntime(stateDir, async (runtime) => {
      expect(runtime.ingest.caughtUp).toBeNull();
      expect(runtime.indexing()).toBeNull();
      expect(runtime.monitor.lastPass()).not.toBeNull();
      expect(runtime.recoveryNotice()).toEqual({ total: 1, outcomes: { queued: ["orphaned"] } });
      await expect(runtime.firstBatch()).resolves.toBeUndefined();
    });
  });
});

describe("the monitor's loop", () => {
  const aPass = (): MonitorPass => ({ at: Date.now(), stuck: [], counts: {} }) as unknown as MonitorPass;

  it("with startAfter: no pass until it settles, then one at once; stopped before, none ever", async () => {
    let passes = 0;
    let release!: () => void;
    const loop = startMonitorLoop(() => (passes++, aPass()), { intervalMs: 60_000, startAfter: new Promise<void>((resolve) => (release = resolve)) });
    await nextTurn();
    expect(passes).toBe(0);
    release();
    await eventually(() => (passes === 1 ? true : undefined));
    loop.stop();

    let never!: () => void;
    const settles = new Promise<void>((resolve) => (never = resolve));
    const stopped = startMonitorLoop(() => (passes++, aPass()), { intervalMs: 60_000, startAfter: settles });
    stopped.stop();
    never();
    // Settled, and a turn later every reaction to it has run: the stopped loop made no pass.
    await settles;
    await nextTurn();
    expect(passes).toBe(1);
  });
});
