import fs from "node:fs";
import Database from "better-sqlite3";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { writeRequestFile } from "../helpers/builders";
import { aRecording, aTracker, tempStateDir } from "../helpers/stateDir";
import { activityView } from "../../lib/views/activityView";
import { binPercentile, durationBin } from "../../lib/model/activity";

const MIN = 60_000;
const SEC = 1000;

function step(from: string | null, to: string, at: number, extra: Record<string, unknown> = {}) {
  return { from, to, at, ...extra };
}

/** A file as reqwatch writes it, with its history; the fields the steps say. */
function withHistory(requestId: string, workspace: string, steps: ReturnType<typeof step>[]) {
  const last = steps.at(-1)!;
  return {
    requestId,
    workspace,
    state: last.to,
    previousState: last.from ?? undefined,
    createdAt: steps[0]!.at,
    lastUpdatedAt: last.at,
    version: steps.length,
    transitions: steps,
  };
}

/** Within the histogram's 9%: what the charts promise for a percentile. */
function near(value: number | null | undefined, exact: number): void {
  expect(value).not.toBeNull();
  expect(Math.abs(value! - exact) / exact).toBeLessThan(0.1);
}

describe("the charts' aggregates", () => {
  // T is a minute boundary 40 minutes ago: every step below is within the last hour but r5's.
  const now = Date.now();
  const T = Math.floor(now / MIN) * MIN - 40 * MIN;

  function fixtures(stateDir: string) {
    // Waited 10 s, ran 30 s, completed.
    writeRequestFile(
      stateDir,
      withHistory("r1", "alpha", [
        step(null, "queued", T),
        step("queued", "processing", T + 10 * SEC, { token: "a" }),
        step("processing", "completed", T + 40 * SEC, { token: "a" }),
      ]),
    );
    // Waited 20 s, failed after 40 s (to be retried), waited 60 s, ran 5 s.
    writeRequestFile(
      stateDir,
      withHistory("r2", "alpha", [
        step(null, "queued", T),
        step("queued", "processing", T + 20 * SEC, { token: "b" }),
        step("processing", "queued", T + 60 * SEC, { token: "b", error: "rate limited" }),
        step("queued", "processing", T + 120 * SEC, { token: "c" }),
        step("processing", "completed", T + 125 * SEC, { token: "c" }),
      ]),
    );
    // Another workspace: waited 30 s and still runs (another program's claim: no token); one still queued.
    writeRequestFile(stateDir, withHistory("r3", "beta", [step(null, "queued", T + 29 * MIN), step("queued", "processing", T + 29 * MIN + 30 * SEC)]));
    writeRequestFile(stateDir, withHistory("r4", "beta", [step(null, "queued", T + 30 * MIN)]));
    // Two hours ago: out of the last hour, in the last day.
    writeRequestFile(
      stateDir,
      withHistory("r5", "alpha", [
        step(null, "queued", T - 120 * MIN),
        step("queued", "processing", T - 120 * MIN + SEC, { token: "d" }),
        step("processing", "failed", T - 120 * MIN + 2 * SEC, { token: "d" }),
      ]),
    );
    // A gateway's own file, with lifecycle times and no history (and fractions of a ms): created and queued at +10 min, ran +11 to +12.
    writeRequestFile(stateDir, {
      requestId: "r6",
      workspace: "alphabet",
      state: "completed",
      createdAt: T + 10 * MIN + 0.25,
      queuedAt: T + 10 * MIN + 0.5,
      processingStartedAt: T + 11 * MIN + 0.75,
      completedAt: T + 12 * MIN + 0.5,
      lastUpdatedAt: T + 12 * MIN + 0.5,
    });
  }

  it("counts ends, waits, run times and states per minute over the last hour, by hand", () => {
    const stateDir = tempStateDir();
    fixtures(stateDir);
    const { reader } = aRecording({ stateDir });
    const view = activityView(reader, "1h", null, now);

    expect(view.pointMs).toBe(MIN);
    expect(view.times).toHaveLength(60);
    const at = (offsetMs: number) => view.times.indexOf(T + offsetMs);
    expect(at(0)).toBeGreaterThanOrEqual(0);

    expect(view.totals).toEqual({ completed: 3, failed: 1, "timed out": 0, released: 0, stopped: 0 });
    expect(view.ended.completed[at(0)]).toBe(1);
    expect(view.ended.failed[at(MIN)]).toBe(1);
    expect(view.ended.completed[at(2 * MIN)]).toBe(1);
    expect(view.ended.completed[at(12 * MIN)]).toBe(1);

    // Minute 0: claims after 10 s and 20 s; minute 2: after 60 s; minute 11 (r6): 60 s; minute 29: 30 s.
    near(view.wait.p50[at(0)], 10_000);
    near(view.wait.p95[at(0)], 20_000);
    near(view.wait.p50[at(2 * MIN)], 60_000);
    near(view.wait.p50[at(11 * MIN)], 60_000);
    near(view.wait.p50[at(29 * MIN)], 30_000);
    expect(view.wait.p50[at(5 * MIN)]).toBeNull();
    // Runs: 30 s (minute 0), 40 s (minute 1), 5 s (minute 2), 60 s (minute 12).
    near(view.run.p50[at(0)], 30_000);
    near(view.run.p50[at(MIN)], 40_000);
    near(view.run.p50[at(2 * MIN)], 5_000);
    near(view.run.p95[at(12 * MIN)], 60_000);

    // States at each minute's end: r2 runs at the end of minute 0, waits again at the end of minute 1.
    expect(view.states.processing[at(0)]).toBe(1);
    expect(view.states.queued[at(0)]).toBe(0);
    expect(view.states.queued[at(MIN)]).toBe(1);
    expect(view.states.processing[at(2 * MIN)]).toBe(0);
    expect(view.states.processing[at(29 * MIN)]).toBe(1);
    expect(view.states.queued[at(29 * MIN)]).toBe(0);
    expect(view.states.queued.at(-1)).toBe(1);
    expect(view.states.processing.at(-1)).toBe(1);
    expect(view.states.queued[0]).toBe(0);
  });

  it("counts a file whose times do not say when it entered its state (a queued file with no queuedAt) in that state from its last update, not from before it existed", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, { requestId: "bare", workspace: "gw", state: "queued", createdAt: T + 20 * MIN, lastUpdatedAt: T + 20 * MIN });
    writeRequestFile(stateDir, {
      requestId: "done",
      workspace: "gw",
      state: "completed",
      createdAt: T + 5 * MIN,
      queuedAt: T + 5 * MIN,
      lastUpdatedAt: T + 30 * MIN,
    });
    const view = activityView(aRecording({ stateDir }).reader, "1h", null, now);
    const at = (offsetMs: number) => view.times.indexOf(T + offsetMs);
    // "done" waits from +5 (its queuedAt) until its last update at +30, when it was completed at the latest; "bare" from +20.
    expect(view.states.queued[at(4 * MIN)]).toBe(0);
    expect(view.states.queued[at(19 * MIN)]).toBe(1);
    expect(view.states.queued[at(20 * MIN)]).toBe(2);
    expect(view.states.queued[at(30 * MIN)]).toBe(1);
    expect(view.states.queued[0]).toBe(0);
    expect(view.states.created[at(19 * MIN)]).toBe(0);
  });

  it("picks workspaces exactly or by prefix, and reads the last day in quarter hours", () => {
    const stateDir = tempStateDir();
    fixtures(stateDir);
    const { reader } = aRecording({ stateDir });
    expect(activityView(reader, "1h", { workspace: "alpha" }, now).totals.completed).toBe(2);
    expect(activityView(reader, "1h", { workspacePrefix: "alpha" }, now).totals.completed).toBe(3);
    const beta = activityView(reader, "1h", { workspace: "beta" }, now);
    expect(beta.totals.completed).toBe(0);
    expect(beta.states.queued.at(-1)).toBe(1);
    expect(beta.states.processing.at(-1)).toBe(1);

    const day = activityView(reader, "24h", null, now);
    expect(day.pointMs).toBe(15 * MIN);
    expect(day.times).toHaveLength(96);
    // r2's failed attempt, and r5's two hours ago.
    expect(day.totals).toMatchObject({ completed: 3, failed: 2 });
    const week = activityView(reader, "7d", null, now);
    expect(week.times).toHaveLength(168);
    expect(week.totals).toMatchObject({ completed: 3, failed: 2 });
    near(week.run.p50[week.times.findIndex((t) => t === Math.floor((T - 120 * MIN) / 3_600_000) * 3_600_000)], 1000);
  });

  it("the same after writes through the tracker and after a rebuild of the index from the files", () => {
    const stateDir = tempStateDir();
    fixtures(stateDir);
    const { tracker, reader } = aRecording({ stateDir });
    tracker.create({ requestId: "live", workspace: "alpha", state: "queued" });
    // Both queued requests are claimed: the new one completes, r4 fails for good.
    const claims = [tracker.claimNext({ worker: "me" })!, tracker.claimNext({ worker: "me" })!];
    expect(claims.map((claim) => claim.request.requestId).sort()).toEqual(["live", "r4"]);
    for (const claim of claims) {
      if (claim.request.requestId === "live") tracker.complete("live", claim.token);
      else tracker.fail("r4", claim.token, "bad input", { retryable: false });
    }
    const later = Date.now() + 1;
    const live = activityView(reader, "1h", null, later);
    expect(live.totals).toMatchObject({ completed: 4, failed: 2 });
    expect(live.states.queued.at(-1)).toBe(0);
    expect(live.states.processing.at(-1)).toBe(1);
    const day = activityView(reader, "24h", { workspacePrefix: "al" }, later);

    tracker.close();
    fs.rmSync(path.join(stateDir, "index.db"));
    const rebuilt = aRecording({ stateDir }).reader;
    expect(activityView(rebuilt, "1h", null, later)).toEqual(live);
    expect(activityView(rebuilt, "24h", { workspacePrefix: "al" }, later)).toEqual(day);
  });

  it("a file rewritten with another history replaces its steps, as a rebuild would count them", () => {
    const stateDir = tempStateDir();
    fixtures(stateDir);
    const { tracker, reader, operator } = aRecording({ stateDir });
    // Another program rewrites r1: it failed at +3 min after a 2-minute wait, instead of completing at +40 s.
    writeRequestFile(stateDir, {
      ...withHistory("r1", "alpha", [
        step(null, "queued", T + MIN),
        step("queued", "processing", T + 3 * MIN, { token: "z" }),
        step("processing", "failed", T + 3 * MIN + 5 * SEC, { token: "z" }),
      ]),
      version: 9,
    });
    operator.recover({ processingStuckAfterMs: 365 * 86_400_000 });
    const view = activityView(reader, "1h", null, now);
    expect(view.totals).toMatchObject({ completed: 2, failed: 2 });
    near(view.wait.p50[view.times.indexOf(T + 3 * MIN)], 120_000);
    tracker.close();
    fs.rmSync(path.join(stateDir, "index.db"));
    expect(activityView(aRecording({ stateDir }).reader, "1h", null, now)).toEqual(view);
  });

  it("a cleaned-up request leaves the charts", () => {
    const stateDir = tempStateDir();
    fixtures(stateDir);
    const { tracker, reader } = aRecording({ stateDir });
    const before = activityView(reader, "24h", null, now);
    tracker.close();
    fs.rmSync(path.join(stateDir, "requests", "r5.json"));
    const reopened = aRecording({ stateDir });
    const after = activityView(reopened.reader, "24h", null, now);
    expect(after.totals.failed).toBe(before.totals.failed - 1);
    // Its rows in the rollups went with it, not left at zero: as many rows as a rebuild of what is left makes.
    const rollupRows = () => {
      const db = new Database(path.join(stateDir, "index.db"), { readonly: true });
      const n = db.prepare("SELECT count(*) FROM activity").pluck().get() as number;
      db.close();
      return n;
    };
    const left = rollupRows();
    reopened.close();
    fs.rmSync(path.join(stateDir, "index.db"));
    aTracker({ stateDir });
    expect(rollupRows()).toBe(left);
  });
});

describe("percentiles from the histogram", () => {
  it("reads the bin the rank falls in", () => {
    const bins = new Map<number, number>();
    for (const ms of [100, 100, 100, 200, 5000]) bins.set(durationBin(ms), (bins.get(durationBin(ms)) ?? 0) + 1);
    near(binPercentile(bins, 0.5), 100);
    near(binPercentile(bins, 0.8), 200);
    near(binPercentile(bins, 0.95), 5000);
    expect(binPercentile(new Map(), 0.5)).toBeNull();
    expect(binPercentile(new Map([[durationBin(0), 3]]), 0.5)).toBe(0);
  });
});

describe("the charts as time passes, without the server", () => {
  it("move on to the interval holding now: new intervals are empty, the live states keep their counts, what scrolls out leaves the totals", async () => {
    const { advanceActivity } = await import("../../lib/views/activityView");
    const stateDir = tempStateDir();
    const { tracker, reader } = aRecording({ stateDir });
    tracker.create({ requestId: "one", workspace: "w", state: "queued" });
    const claim = tracker.claimNext({ worker: "me" })!;
    tracker.complete("one", claim.token);
    tracker.create({ requestId: "two", workspace: "w", state: "queued" });
    const now = Date.now();
    const view = activityView(reader, "1h", null, now);
    expect(advanceActivity(view, now)).toBe(view);

    const later = advanceActivity(view, now + 2 * MIN);
    expect(later.times.at(-1)).toBe(Math.floor((now + 2 * MIN) / MIN) * MIN);
    expect(later.times).toHaveLength(60);
    expect(later.ended.completed.slice(-3)).toEqual([1, 0, 0]);
    expect(later.wait.p50.slice(-2)).toEqual([null, null]);
    expect(later.states.queued.slice(-3)).toEqual([1, 1, 1]);
    expect(later.totals.completed).toBe(1);
    // Past the hour, the completion scrolls out; the server would say the same.
    const hourLater = advanceActivity(view, now + 61 * MIN);
    expect(hourLater.totals.completed).toBe(0);
    expect(hourLater).toEqual(activityView(reader, "1h", null, now + 61 * MIN));
  });
});
