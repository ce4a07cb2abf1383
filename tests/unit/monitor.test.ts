import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { currentProcess } from "../../lib/process/liveness";
import { aClaimedRequest, aRequest, writeRequestFile, type ClaimShape } from "../helpers/builders";
import { aDeadPid } from "../helpers/processes";
import { aTracker, readRaw, tempStateDir } from "../helpers/stateDir";

const MINUTE = 60_000;

function silentClaim(overrides: Partial<ClaimShape> = {}): ClaimShape {
  const long = Date.now() - 10 * MINUTE;
  return { token: "tok", pid: aDeadPid(), claimedAt: long, heartbeatAt: long, ...overrides };
}

function liveClaim(overrides: Partial<ClaimShape> = {}): ClaimShape {
  const me = currentProcess();
  return silentClaim({ pid: me.pid, host: me.host, processStartedAt: me.processStartedAt ?? undefined, ...overrides });
}

describe("the stuck monitor", () => {
  it("flags a request queued past its threshold and does nothing else", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "waiting", state: "queued", queuedAt: Date.now() - 11 * MINUTE, lastUpdatedAt: Date.now() - 11 * MINUTE }));
    writeRequestFile(stateDir, aRequest({ requestId: "fresh", state: "queued", queuedAt: Date.now() - MINUTE, lastUpdatedAt: Date.now() - MINUTE }));
    const tracker = aTracker({ stateDir });
    const before = readRaw(stateDir, "waiting");

    const pass = tracker.monitorPass();

    expect(pass.counts).toMatchObject({ stuckQueued: 1, released: 0 });
    expect(pass.stuck).toEqual([{ requestId: "waiting", workspace: "ws", state: "queued", since: expect.any(Number), reason: "queued 11m" }]);
    expect(readRaw(stateDir, "waiting")).toBe(before);
    expect(tracker.stuck()).toEqual(pass.stuck);
  });

  it("times out a request past its deadline", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aClaimedRequest("late", liveClaim({ heartbeatAt: Date.now() }), { timeoutAt: Date.now() - 1000 }));
    const tracker = aTracker({ stateDir });
    expect(tracker.monitorPass().counts.deadlineTimedOut).toBe(1);
    expect(tracker.get("late")).toMatchObject({ state: "timeout", timedOut: true, claim: null });
    expect(tracker.get("late")?.transitions?.at(-1)?.reason).toMatch(/^past its deadline/);
  });

  it("applies the result marker of a silent worker instead of running the request again", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aClaimedRequest("finished", silentClaim()));
    fs.mkdirSync(path.join(stateDir, "results"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "results", "finished.json"), JSON.stringify({ requestId: "finished", token: "tok", outcome: "completed", fields: { output: "42" }, writtenAt: Date.now() }));
    const tracker = aTracker({ stateDir });

    expect(tracker.monitorPass().counts).toMatchObject({ resultsApplied: 1, released: 0 });
    expect(tracker.get("finished")).toMatchObject({ state: "completed", output: "42" });
    expect(tracker.get("finished")?.transitions?.at(-1)).toMatchObject({ by: "monitor", reason: "result marker found: the worker finished but did not report", token: "tok" });
    expect(fs.existsSync(path.join(stateDir, "results", "finished.json"))).toBe(false);
  });

  it("ignores a marker written under another claim", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aClaimedRequest("other", silentClaim()));
    fs.mkdirSync(path.join(stateDir, "results"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "results", "other.json"), JSON.stringify({ requestId: "other", token: "older-claim", outcome: "completed", writtenAt: Date.now() }));
    const tracker = aTracker({ stateDir });
    expect(tracker.monitorPass().counts).toMatchObject({ resultsApplied: 0, released: 1 });
    expect(tracker.get("other")?.state).toBe("queued");
  });

  it("leaves a silent request alone while its worker process is alive, and flags it", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aClaimedRequest("slow", liveClaim()));
    const tracker = aTracker({ stateDir });
    const pass = tracker.monitorPass();
    expect(pass.counts).toMatchObject({ stuckAlive: 1, released: 0 });
    expect(pass.stuck[0]?.reason).toMatch(new RegExp(`^processing 10m, worker ${process.pid} alive, silent 10m$`));
    expect(tracker.get("slow")?.state).toBe("processing");
  });

  it("does not take a recycled pid for the live worker", () => {
    const stateDir = tempStateDir();
    // Our own pid, but a process that started at another time: the claiming worker is gone.
    writeRequestFile(stateDir, aClaimedRequest("recycled", liveClaim({ processStartedAt: (currentProcess().processStartedAt ?? 0) - 3_600_000 })));
    const tracker = aTracker({ stateDir });
    expect(tracker.monitorPass().counts.released).toBe(1);
    expect(tracker.get("recycled")?.transitions?.at(-1)?.reason).toBe(`released: the worker's pid ${process.pid} is gone (attempt 1 of 3)`);
  });

  it("releases a gone worker's request while attempts remain, else times it out", () => {
    const stateDir = tempStateDir();
    const pid = aDeadPid();
    writeRequestFile(stateDir, aClaimedRequest("again", silentClaim({ pid })));
    writeRequestFile(stateDir, aClaimedRequest("last-try", silentClaim({ pid, token: "tok2" }), { attempt: 3 }));
    const tracker = aTracker({ stateDir });

    const pass = tracker.monitorPass();

    expect(pass.counts).toMatchObject({ released: 1, timedOut: 1 });
    expect(tracker.get("again")).toMatchObject({ state: "queued", claim: null });
    expect(tracker.get("again")?.transitions?.at(-1)).toMatchObject({ by: "monitor", reason: `released: the worker's pid ${pid} is gone (attempt 1 of 3)`, token: "tok" });
    expect(tracker.get("last-try")).toMatchObject({ state: "timeout" });
    expect(tracker.get("last-try")?.transitions?.at(-1)?.reason).toBe(`the worker's pid ${pid} is gone; no attempts left (3 of 3)`);
    expect(pass.stuck).toEqual([]);
  });

  it("is one cheap query when nothing is wrong", () => {
    const stateDir = tempStateDir();
    for (let i = 0; i < 50; i++) writeRequestFile(stateDir, aRequest({ requestId: `ok${i}`, state: "completed" }));
    const tracker = aTracker({ stateDir });
    const pass = tracker.monitorPass();
    expect(pass.stuck).toEqual([]);
    expect(Object.values(pass.counts).every((n) => n === 0)).toBe(true);
  });
});
