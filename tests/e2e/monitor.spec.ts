import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { expect, test } from "./fixtures";

test.use({ appEnv: { REQWATCH_HEARTBEAT_TIMEOUT: "1s", REQWATCH_MONITOR_INTERVAL: "200ms" } });

test("the dashboard server runs the stuck monitor: a dead worker's request is requeued while it runs", async ({ request, stateDir, tracker }) => {
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
  tracker.recover();

  // No one calls anything: the server's own monitor notices the silence and the dead pid.
  await expect.poll(() => tracker.get("orphan")?.state, { timeout: 15_000 }).toBe("queued");
  expect(tracker.get("orphan")?.transitions?.at(-1)).toMatchObject({ by: "monitor", reason: `released: the worker's pid ${deadPid} is gone (attempt 1 of 3)` });

  const health = await (await request.get("/api/health")).json();
  expect(health.monitor).toMatchObject({ intervalMs: 200, lastError: null });
  expect(health.monitor.lastPassAt).toBeGreaterThan(claimedAt);
});
