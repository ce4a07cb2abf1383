import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openRoles, openTracker } from "../../lib/tracker";
import { trackingEnabled } from "../../lib/store/options";
import { DISABLED_HELD } from "../../lib/disabledTracker";
import { TimeoutError } from "../../lib/model/errors";
import { childEnv, WORKERS } from "../helpers/processes";
import { tempParent, tempStateDir } from "../helpers/stateDir";
import { thrown } from "../helpers/thrown";
import { treeSnapshot } from "../helpers/treeSnapshot";

const saved = process.env.REQWATCH_DISABLED;
afterEach(() => {
  if (saved === undefined) delete process.env.REQWATCH_DISABLED;
  else process.env.REQWATCH_DISABLED = saved;
});

/** A managed folder with a request, a session and an index in it, as a gateway leaves it before the rollback. */
function aRecordingFolder(): string {
  const stateDir = tempStateDir();
  const tracker = openTracker({ stateDir });
  tracker.create({ workspace: "gateway", requestId: "before", state: "queued" });
  tracker.sessions.start();
  tracker.close();
  return stateDir;
}

/** Every call a gateway, a worker and a hook make: none may throw, and none may touch a file. */
function runTheHotPath(tracker: ReturnType<typeof openTracker>) {
  const request = tracker.create({ workspace: "gateway", chatId: 42, prompt: "hi", model: "m", state: "queued" });
  const processing = tracker.transition(request.requestId, "processing");
  const completed = tracker.update(request.requestId, { to: "completed", fields: { output: "ok", tokens: 3 }, reason: "exit 0" });
  // The real tracker refuses these; with tracking off the caller goes on.
  const refused = tracker.transition(request.requestId, "processing");
  const unknown = tracker.transition("made-elsewhere", "completed", { fields: { output: "late" } });
  const managed = tracker.update(request.requestId, { fields: { version: 99 } as never });
  const delivered = tracker.complete("made-elsewhere-2", "token", { output: "done" });
  const failed = tracker.fail("made-elsewhere-3", "token", "rate limited", { retryable: true });
  const sessions = [
    tracker.sessions.start(),
    tracker.sessions.recordCommand({ command: "npm test", status: "completed" }),
    tracker.sessions.recordFile({ path: "src/a.ts", summary: "edited" }),
    tracker.sessions.updateSnapshot({ activeTask: "rollback" }),
    tracker.sessions.reset(),
  ];
  tracker.recordResult(request.requestId, "token", { outcome: "completed" });
  return {
    request,
    processing,
    completed,
    refused,
    unknown,
    managed,
    delivered,
    failed,
    sessions,
    claim: tracker.claimNext(),
    beat: tracker.heartbeat("x", "token"),
  };
}

describe("tracking off: the library", () => {
  it("with enabled: false, records nothing in a folder that holds requests, and the hot path never throws", () => {
    const stateDir = aRecordingFolder();
    const before = treeSnapshot(path.dirname(stateDir));
    const tracker = openTracker({ stateDir, enabled: false });
    const run = runTheHotPath(tracker);

    expect(run.request).toMatchObject({ workspace: "gateway", chatId: 42, prompt: "hi", state: "queued", version: 1, timedOut: false });
    expect(run.request.transitions?.map((step) => step.to)).toEqual(["created", "queued"]);
    expect(run.processing).toMatchObject({ state: "processing", attempt: 1, version: 2 });
    expect(run.completed).toMatchObject({ state: "completed", output: "ok", tokens: 3, version: 3 });
    expect(run.refused.state).toBe("processing");
    expect(run.unknown).toMatchObject({ requestId: "made-elsewhere", state: "completed", output: "late" });
    expect(run.managed.requestId).toBe(run.request.requestId);
    expect(run.delivered).toMatchObject({ outcome: "applied", request: { state: "completed", output: "done" } });
    expect(run.failed).toMatchObject({ outcome: "applied", request: { state: "failed", error: "rate limited" } });
    expect(run.sessions.every((result) => result.ok)).toBe(true);
    expect(run.claim).toBeNull();
    expect(run.beat).toBe(true);
    // Held in memory for this process: get after create works; reads of the folder are empty.
    expect(tracker.get(run.request.requestId)?.state).toBe("processing");
    expect(tracker.get("before")).toBeNull();
    expect(tracker.list()).toEqual({ items: [], nextCursor: null });
    expect(tracker.options.enabled).toBe(false);
    tracker.close();

    expect(treeSnapshot(path.dirname(stateDir))).toEqual(before);
  });

  it("with REQWATCH_DISABLED=1, does not create a state folder that does not exist, nor the cache's", () => {
    const parent = tempParent();
    const stateDir = path.join(parent, "never", "state");
    const cache = process.env.REQWATCH_CACHE_DIR!;
    const cacheBefore = treeSnapshot(cache);
    process.env.REQWATCH_DISABLED = "1";
    const tracker = openTracker({ stateDir, create: true });
    runTheHotPath(tracker);
    tracker.startMonitor().stop();
    tracker.close();
    expect(fs.readdirSync(parent)).toEqual([]);
    expect(treeSnapshot(cache)).toEqual(cacheBefore);
  });

  it("reqwatch's own programs (the dashboard's, the CLI's reads and actions) are refused the folder, which stays as it was", () => {
    const stateDir = aRecordingFolder();
    const before = treeSnapshot(path.dirname(stateDir));
    expect(() => openRoles({ stateDir, enabled: false })).toThrow(
      expect.objectContaining({ code: "READ_ONLY", message: expect.stringContaining("tracking is off") }),
    );
    process.env.REQWATCH_DISABLED = "1";
    expect(() => openRoles({ stateDir })).toThrow(expect.objectContaining({ code: "READ_ONLY" }));
    expect(treeSnapshot(path.dirname(stateDir))).toEqual(before);
  });

  it("keeps a bounded number of requests in memory, forgetting the oldest", () => {
    const tracker = openTracker({ stateDir: path.join(tempParent(), "state"), enabled: false });
    for (let i = 0; i <= DISABLED_HELD; i++) tracker.create({ workspace: "gateway", requestId: `r${i}` });
    expect(tracker.get("r0")).toBeNull();
    expect(tracker.get("r1")?.requestId).toBe("r1");
    expect(tracker.get(`r${DISABLED_HELD}`)?.requestId).toBe(`r${DISABLED_HELD}`);
    tracker.close();
  });

  it("waitForResult resolves on this process's own completion, else times out", async () => {
    const tracker = openTracker({ stateDir: path.join(tempParent(), "state"), enabled: false });
    const request = tracker.create({ workspace: "gateway", state: "processing" });
    const waiting = tracker.waitForResult(request.requestId, { timeoutMs: 5_000 });
    tracker.complete(request.requestId, "token", { output: "ok" });
    await expect(waiting).resolves.toMatchObject({ state: "completed", output: "ok" });
    await expect(tracker.waitForResult("nobody-finishes-it", { timeoutMs: 20 })).rejects.toBeInstanceOf(TimeoutError);
    const cut = tracker.waitForResult(request.requestId + "-never", { timeoutMs: 60_000 });
    tracker.close();
    await expect(cut).rejects.toThrow("The tracker closed while waiting");
  });

  it("in a gateway process with REQWATCH_DISABLED=1 or enabled: false: no file, no throw, and the line said once", () => {
    for (const how of ["env", "option"]) {
      const stateDir = aRecordingFolder();
      const before = treeSnapshot(path.dirname(stateDir));
      const env = { ...childEnv(), ...(how === "env" ? { REQWATCH_DISABLED: "1" } : withDisabled("")) };
      const child = spawnSync(process.execPath, [path.join(WORKERS, "disabledGateway.cjs"), stateDir, how], { encoding: "utf8", env });
      expect(child.status, child.stderr).toBe(0);
      const lines = child.stderr.trim().split("\n");
      expect(lines).toEqual([
        how === "env"
          ? "reqwatch: tracking is off (REQWATCH_DISABLED=1): nothing is recorded. Unset REQWATCH_DISABLED to turn tracking back on."
          : "reqwatch: tracking is off (the option enabled: false): nothing is recorded. Open the tracker without it to turn tracking back on.",
      ]);
      const out = JSON.parse(child.stdout);
      expect(out.done).toMatchObject({ state: "completed", output: "ok" });
      expect(out.called.callback).toMatchObject({ success: true, attempts: 1 });
      expect(out.session.ok).toBe(true);
      expect(out.stats).toMatchObject({ completed: 0, failed: 0 });
      expect(out.other).toMatchObject({ requestId: "made-by-another-process", state: "completed" });
      expect(treeSnapshot(path.dirname(stateDir))).toEqual(before);
    }
  });
});

/** This process's environment with REQWATCH_DISABLED set to `value` (or unset). */
const withDisabled = (value?: string): NodeJS.ProcessEnv => ({ ...process.env, REQWATCH_DISABLED: value });

describe("tracking off: the switch", () => {
  it("REQWATCH_DISABLED takes 1/true/yes/on to turn tracking off and 0/false/no/off/empty to leave it on, in any case", () => {
    for (const value of ["1", "true", "YES", "On", " on "]) expect(trackingEnabled({}, withDisabled(value)), value).toBe(false);
    for (const value of ["0", "false", "No", "OFF", ""]) expect(trackingEnabled({}, withDisabled(value)), value).toBe(true);
    expect(trackingEnabled({}, withDisabled())).toBe(true);
  });

  it("enabled: false wins over the environment; REQWATCH_DISABLED turns off even enabled: true", () => {
    expect(trackingEnabled({ enabled: false }, withDisabled("0"))).toBe(false);
    // The option is not weighed against a bad value it does not need.
    expect(trackingEnabled({ enabled: false }, withDisabled("maybe"))).toBe(false);
    expect(trackingEnabled({ enabled: true }, withDisabled("1"))).toBe(false);
  });

  it("refuses any other value, naming the variable, and creates nothing", () => {
    const parent = tempParent();
    process.env.REQWATCH_DISABLED = "maybe";
    expect(thrown(() => openTracker({ stateDir: path.join(parent, "state") }))).toEqual({
      code: "BAD_INPUT",
      message: 'Invalid REQWATCH_DISABLED: "maybe". Use 1, true, yes or on; or 0, false, no, off or empty.',
    });
    expect(thrown(() => openTracker({ stateDir: path.join(parent, "state"), enabled: "no" as never }))).toEqual({
      code: "BAD_INPUT",
      message: 'Option "enabled" must be true or false.',
    });
    expect(fs.readdirSync(parent)).toEqual([]);
  });

  it("REQWATCH_DISABLED=0 records as usual", () => {
    process.env.REQWATCH_DISABLED = "0";
    const stateDir = path.join(tempParent(), "state");
    const tracker = openTracker({ stateDir });
    tracker.create({ workspace: "gateway", requestId: "kept" });
    tracker.close();
    expect(fs.existsSync(path.join(stateDir, "requests", "kept.json"))).toBe(true);
  });
});
