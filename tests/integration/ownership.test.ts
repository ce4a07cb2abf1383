import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isReqwatchError } from "../../lib/model/errors";
import { MARKER_FILE } from "../../lib/store/ownership";
import { openRuntime } from "../../lib/dashboard/runtime";
import { currentProcess } from "../../lib/process/liveness";
import { openRoles, openTracker } from "../../lib/tracker";
import { aClaimedRequest, aRequest, anOldCompletedRequest, writeRequestFile } from "../helpers/builders";
import { aClock } from "../helpers/clock";
import { aDeadPid } from "../helpers/processes";
import { aRecording, aTracker, readRaw, tempForeignDir, tempParent, tempStateDir } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";

const HOUR = 60 * 60 * 1000;

function refused(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isReqwatchError(error, "READ_ONLY")) return error.message;
    throw error;
  }
  throw new Error("the write was not refused");
}

describe("a folder another program writes is observed, never written", () => {
  it("is read into an index under the cache directory, and every write is refused with nothing changed", async () => {
    const stateDir = tempForeignDir();
    // On a clock of its own: "processing 3h" is exact however long the open takes.
    const clock = aClock();
    writeRequestFile(stateDir, aRequest({ requestId: "queued-one", state: "queued" }, clock.now()));
    writeRequestFile(stateDir, anOldCompletedRequest("old", clock.now()));
    writeRequestFile(stateDir, aRequest({ requestId: "hung", state: "processing", processingStartedAt: clock.now() - 3 * HOUR }, clock.now()));
    const before = treeSnapshot(stateDir);

    const { tracker, reader, operator, upkeep } = aRecording({ stateDir, now: clock.now });

    expect(tracker.ownership).toMatchObject({
      access: "observed",
      reason: "reqwatch did not create this folder: it holds files and no reqwatch marker (reqwatch.json)",
    });
    expect(reader.stateDir.indexFile.startsWith(process.env.REQWATCH_CACHE_DIR!)).toBe(true);
    expect(
      tracker
        .list()
        .items.map((r) => r.requestId)
        .sort(),
    ).toEqual(["hung", "old", "queued-one"]);
    // The owner's start-up recovery does not run here: the stuck request is only flagged.
    expect(tracker.get("hung")?.state).toBe("processing");
    expect(operator.monitorPass().stuck.map((s) => s.reason)).toEqual(["processing 3h; no reqwatch worker holds it (written by another program)"]);
    expect(operator.cleanup({ dryRun: true }).matched).toBe(1);
    expect(operator.retry({ ids: ["hung"] }, { dryRun: true }).retried).toHaveLength(1);

    expect(refused(() => tracker.create({ workspace: "w" }))).toMatch(/^Writing is refused: .* is observed read-only \(reqwatch did not create this folder/);
    refused(() => tracker.transition("queued-one", "processing"));
    refused(() => tracker.claimNext());
    refused(() => operator.retry({ ids: ["hung"] }));
    expect(refused(() => operator.cleanup())).toMatch(/^Cleanup is refused/);
    refused(() => operator.recover());
    refused(() => tracker.recordResult("hung", "t", { outcome: "completed" }));
    await expect(operator.actions.run({ kind: "retry", ids: ["hung"] })).rejects.toMatchObject({ code: "READ_ONLY" });
    expect(tracker.sessions.start()).toMatchObject({ ok: false, error: { code: "READ_ONLY" } });
    upkeep.startIngest().stop();
    tracker.close();

    expect(treeSnapshot(stateDir)).toEqual(before);
  });

  it("opens a folder reqwatch manages read-only when asked, and writes nothing there", () => {
    const stateDir = tempStateDir();
    aTracker({ stateDir }).create({ requestId: "mine", workspace: "w", state: "queued" });
    const before = treeSnapshot(stateDir);
    const tracker = aTracker({ stateDir, readOnly: true });
    expect(tracker.ownership).toMatchObject({ access: "observed", reason: "it was opened read-only" });
    expect(tracker.get("mine")?.state).toBe("queued");
    expect(refused(() => tracker.transition("mine", "processing"))).toMatch(
      /open it without read-only \(unset REQWATCH_READ_ONLY; drop the dashboard's --read-only or the option readOnly\)/,
    );
    tracker.close();
    expect(treeSnapshot(stateDir)).toEqual(before);
  });
});

describe("which folders reqwatch manages", () => {
  it("one it creates, an empty one, and one an earlier reqwatch made (index.db) without any step", () => {
    const parent = tempParent();
    const created = path.join(parent, "new");
    expect(openTracker({ stateDir: created }).ownership.access).toBe("managed");
    expect(JSON.parse(fs.readFileSync(path.join(created, MARKER_FILE), "utf8"))).toMatchObject({ reqwatch: "state directory", how: "created" });

    const empty = path.join(parent, "empty");
    fs.mkdirSync(empty);
    expect(openTracker({ stateDir: empty }).ownership.access).toBe("managed");

    const earlier = path.join(parent, "earlier");
    const tracker = openTracker({ stateDir: earlier });
    tracker.create({ requestId: "r", workspace: "w" });
    tracker.close();
    fs.rmSync(path.join(earlier, MARKER_FILE));
    const reopened = openTracker({ stateDir: earlier });
    expect(reopened.ownership.access).toBe("managed");
    reopened.transition("r", "queued");
    reopened.close();
    expect(fs.existsSync(path.join(earlier, MARKER_FILE))).toBe(true);
  });

  it("a reader never creates the folder", () => {
    const missing = path.join(tempParent(), "nope");
    expect(() => openRoles({ stateDir: missing, create: false })).toThrow(
      expect.objectContaining({ code: "NOT_FOUND", message: `The state directory ${missing} does not exist.` }),
    );
    expect(fs.existsSync(missing)).toBe(false);
  });
});

describe("the dashboard's runtime changes nothing by looking", () => {
  it("does not time out another program's stuck processing request; releases only a dead reqwatch worker's claim", () => {
    const stateDir = tempStateDir();
    const clock = aClock();
    writeRequestFile(
      stateDir,
      aRequest({ requestId: "gateway-hung", state: "processing", processingStartedAt: clock.now() - 2 * HOUR, createdAt: clock.now() - 2 * HOUR }, clock.now()),
    );
    const claimedAt = clock.now() - 10 * 60 * 1000;
    writeRequestFile(stateDir, aClaimedRequest("orphaned", { token: "t", pid: aDeadPid(), claimedAt, heartbeatAt: claimedAt }));
    const hungBefore = readRaw(stateDir, "gateway-hung");

    const runtime = openRuntime({ stateDir, monitorIntervalMs: 60_000, now: clock.now });
    try {
      expect(readRaw(stateDir, "gateway-hung")).toBe(hungBefore);
      expect(runtime.reader.get("orphaned")?.state).toBe("queued");
      expect(runtime.recoveryNotice()).toEqual({ total: 1, outcomes: { queued: ["orphaned"] } });
      expect(runtime.lastStuck().map((s) => [s.requestId, s.reason])).toEqual([
        ["gateway-hung", "processing 2h; no reqwatch worker holds it (written by another program)"],
      ]);
    } finally {
      runtime.close();
    }
  });
});

describe("what the review found", () => {
  it("a reader, and the dashboard, observe an existing empty folder (a gateway may have made it): nothing is written there", () => {
    const empty = path.join(tempParent(), "state");
    fs.mkdirSync(empty);
    const reading = openRoles({ stateDir: empty, create: false });
    expect(reading.reader.ownership).toMatchObject({ access: "observed", reason: expect.stringMatching(/^the folder is empty and holds no reqwatch marker/) });
    reading.close();
    const runtime = openRuntime({ stateDir: empty, monitorIntervalMs: 60_000 });
    expect(runtime.reader.ownership.access).toBe("observed");
    runtime.close();
    expect(fs.readdirSync(empty)).toEqual([]);
    // A writer's open records into it, and from then on it is reqwatch's.
    const writer = openTracker({ stateDir: empty });
    expect(writer.ownership.access).toBe("managed");
    writer.close();
  });

  it("a repeated completion on a read-only tracker is refused, and leaves the result marker where it is", () => {
    const stateDir = tempStateDir();
    const owner = aTracker({ stateDir });
    owner.create({ requestId: "r", workspace: "w", state: "queued" });
    const claim = owner.claimNext()!;
    owner.recordResult("r", claim.token, { outcome: "completed", fields: { output: "42" } });
    owner.complete("r", claim.token, { output: "42" });
    const marker = path.join(stateDir, "results", "r.json");
    fs.writeFileSync(marker, JSON.stringify({ requestId: "r", token: claim.token, outcome: "completed", writtenAt: Date.now() }));
    const observer = aTracker({ stateDir, readOnly: true });
    expect(refused(() => observer.complete("r", claim.token, { output: "42" }))).toMatch(/^Completing is refused/);
    expect(refused(() => observer.fail("r", claim.token, "x"))).toMatch(/^Failing is refused/);
    observer.close();
    expect(fs.existsSync(marker)).toBe(true);
  });

  it("keeps an observed folder's index private to the user, whatever the folder's own permissions", () => {
    const stateDir = tempForeignDir();
    writeRequestFile(stateDir, aRequest({ requestId: "secret", state: "queued", prompt: "the password is hunter2" }));
    const { reader } = aRecording({ stateDir });
    expect(fs.statSync(reader.stateDir.storeDir).mode & 0o777).toBe(0o700);
  });

  it("a file named reqwatch.json that is not reqwatch's marker does not make a folder reqwatch's", () => {
    const stateDir = tempForeignDir();
    fs.writeFileSync(path.join(stateDir, MARKER_FILE), JSON.stringify({ name: "some other tool's config" }));
    writeRequestFile(stateDir, aRequest({ requestId: "theirs", state: "queued" }));
    expect(aTracker({ stateDir }).ownership).toMatchObject({ access: "observed", reason: "it holds a reqwatch.json that is not reqwatch's marker" });
  });

  it("the owner's start-up recovery leaves a long job alone while its worker is alive, and times out a stuck request nobody holds", () => {
    const stateDir = tempStateDir();
    const started = Date.now() - 2 * HOUR;
    const me = currentProcess();
    writeRequestFile(
      stateDir,
      aClaimedRequest("long-job", {
        token: "t",
        pid: me.pid,
        host: me.host,
        ...(me.processStartedAt !== null && { processStartedAt: me.processStartedAt }),
        claimedAt: started,
        heartbeatAt: started,
      }),
    );
    writeRequestFile(stateDir, aRequest({ requestId: "hung", state: "processing", processingStartedAt: started, createdAt: started - 1000 }));
    const tracker = aTracker({ stateDir });
    expect(tracker.openReport?.timedOut).toEqual(["hung"]);
    expect(tracker.get("long-job")?.state).toBe("processing");
  });

  it("writers opening one empty folder at the same moment all find it reqwatch's and all open its new index: the marker appears whole or not at all", async () => {
    const dir = path.join(tempParent(), "state");
    fs.mkdirSync(dir);
    const script = `const t = require(${JSON.stringify(path.resolve(__dirname, "../../dist/index.cjs"))}).openTracker({ stateDir: process.argv[1], recover: false }); process.stdout.write(t.ownership.access); t.close();`;
    const runs = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<string>((resolve, reject) =>
            execFile(process.execPath, ["-e", script, dir], (error, stdout) => (error ? reject(error) : resolve(stdout))),
          ),
      ),
    );
    expect(runs).toEqual(Array(8).fill("managed"));
    expect(fs.readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });
});
