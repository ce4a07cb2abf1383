import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openTracker } from "../../lib/tracker";
import { aStuckProcessingRequest, aRequest, aGatewayRequest, writeRequestFile } from "../helpers/builders";
import { aRecording, aTracker, readRaw, requestPath, tempStateDir } from "../helpers/stateDir";

describe("recovery on open", () => {
  it("times out requests stuck processing past its threshold with no worker holding them, with a reason, and leaves the rest", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aStuckProcessingRequest("hung-1"));
    writeRequestFile(stateDir, aGatewayRequest("recent"));
    const tracker = aTracker({ stateDir });

    expect(tracker.openReport?.timedOut).toEqual(["hung-1"]);
    const hung = tracker.get("hung-1")!;
    expect(hung).toMatchObject({ state: "timeout", previousState: "processing", timedOut: true });
    expect(hung.transitions?.at(-1)).toMatchObject({
      from: "processing",
      to: "timeout",
      by: "recovery",
      reason: "processing past 1h with no worker holding it",
    });
    expect(tracker.get("recent")?.state).toBe("processing");
  });

  it("takes the processing stuck threshold from the options", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aGatewayRequest("three-seconds-in"));
    const tracker = aTracker({ stateDir, processingStuckAfterMs: 1000 });
    expect(tracker.openReport?.timedOut).toEqual(["three-seconds-in"]);
  });

  it("removes the temp files of crashed reqwatch writers, and never another program's, however old", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aGatewayRequest("r"));
    const dir = path.join(stateDir, "requests");
    // A writer pid no process can have (past any pid_max): crashed, whatever else runs on the machine.
    const ours = ".r.json.999999999.0badf00d.tmp";
    fs.writeFileSync(path.join(dir, ours), '{"torn":');
    fs.writeFileSync(path.join(dir, "r.json.tmp"), "{"); // a jq hook, mid-write
    const oldForeign = path.join(dir, "old.json.tmp");
    fs.writeFileSync(oldForeign, "{");
    const anHourAgo = new Date(Date.now() - 60 * 60 * 1000);
    fs.utimesSync(oldForeign, anHourAgo, anHourAgo);

    const tracker = aTracker({ stateDir });

    expect(tracker.openReport?.removedTempFiles).toEqual([`requests/${ours}`]);
    expect(fs.readdirSync(dir).sort()).toEqual(["old.json.tmp", "r.json", "r.json.tmp"]);
  });

  it("does not take the writer's own spare temp files for a crashed writer's", () => {
    const { tracker, reader, operator } = aRecording();
    tracker.create({ requestId: "r", workspace: "w", state: "queued" });
    tracker.transition("r", "processing");
    tracker.transition("r", "completed");
    const spares = fs.readdirSync(path.join(reader.stateDir.root, "requests")).filter((name) => name.endsWith(".tmp"));
    expect(spares.length).toBeGreaterThan(0);

    expect(operator.recover().removedTempFiles).toEqual([]);
    expect(fs.readdirSync(path.join(reader.stateDir.root, "requests")).filter((name) => name.endsWith(".tmp"))).toEqual(spares);
  });

  it("reads null in an optional field as not set (another program's way of writing it), and still refuses null where a field is required", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, {
      ...aRequest({ requestId: "nulls", state: "processing" }),
      previousState: null,
      completedAt: null,
      queuedAt: null,
      callback: null,
      claim: null,
    });
    writeRequestFile(stateDir, { ...aRequest({ requestId: "no-state", state: "queued" }), state: null });
    const { tracker, reader } = aRecording({ stateDir, recover: false });
    expect(tracker.get("nulls")).toMatchObject({ state: "processing", claim: null });
    expect(tracker.get("nulls")).not.toHaveProperty("completedAt");
    expect(reader.unreadableFiles()).toEqual([expect.objectContaining({ file: "requests/no-state.json", reason: expect.stringMatching(/^field 'state'/) })]);
  });

  it("parses only what changed since the index saw it", () => {
    const stateDir = tempStateDir();
    for (let i = 0; i < 20; i++) writeRequestFile(stateDir, aRequest({ requestId: `r${i}` }));
    openTracker({ stateDir }).close();

    writeRequestFile(stateDir, aRequest({ requestId: "r3", state: "queued" }));
    fs.rmSync(requestPath(stateDir, "r4"));
    writeRequestFile(stateDir, aRequest({ requestId: "new" }));
    const { tracker, operator } = aRecording({ stateDir });
    const report = operator.recover();

    expect(tracker.openReport).toMatchObject({ scanned: 20, changed: 3 });
    expect(report).toMatchObject({ scanned: 20, changed: 0 });
    expect(tracker.get("r3")?.state).toBe("queued");
    expect(tracker.get("r4")).toBeNull();
    expect(tracker.get("new")).not.toBeNull();
  });

  it("takes a file edited by hand as it now is, even at the same version with older times", () => {
    const stateDir = tempStateDir();
    const { tracker, operator } = aRecording({ stateDir });
    tracker.create({ requestId: "edited", workspace: "w", state: "processing" });
    const done = tracker.transition("edited", "completed", { fields: { output: "first" } });
    // Set back three days by hand, as someone who wants it gone sooner would.
    const threeDaysAgo = done.lastUpdatedAt - 3 * 24 * 3_600_000;
    const edited = { ...done, output: "edited by hand", createdAt: threeDaysAgo, completedAt: threeDaysAgo, lastUpdatedAt: threeDaysAgo };
    fs.writeFileSync(requestPath(stateDir, "edited"), JSON.stringify(edited));
    expect(operator.recover()).toMatchObject({ changed: 1 });
    expect(tracker.get("edited")).toEqual(JSON.parse(fs.readFileSync(requestPath(stateDir, "edited"), "utf8")));
    expect(tracker.list({ updatedTo: threeDaysAgo + 1 }).items.map((row) => row.requestId)).toEqual(["edited"]);
  });
});

describe("unreadable files", () => {
  const bad: [string, string | Buffer, RegExp][] = [
    ["invalid-json", "{ not json", /invalid JSON/],
    ["empty", "", /the file is empty/],
    ["truncated", JSON.stringify(aGatewayRequest("truncated")).slice(0, 60), /invalid JSON/],
    ["wrong-types", JSON.stringify({ ...aGatewayRequest("wrong-types"), state: "done", createdAt: "yesterday" }), /field 'state'/],
    ["missing-fields", JSON.stringify({ requestId: "missing-fields" }), /field 'workspace'/],
    ["an-array", "[1,2,3]", /expected a JSON object/],
    ["name-mismatch", JSON.stringify(aGatewayRequest("someone-else")), /file name says 'name-mismatch' but requestId is 'someone-else'/],
    ["binary", Buffer.from([0x00, 0xff, 0x13, 0x37, 0x80]), /NUL bytes/],
  ];

  it("are reported with a reason, kept on disk, and do not hide the others", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aGatewayRequest("good-1"));
    for (const [id, content] of bad) fs.writeFileSync(requestPath(stateDir, id), content);
    fs.writeFileSync(path.join(stateDir, "requests", "bad name.json"), "{}");
    writeRequestFile(stateDir, aGatewayRequest("good-2"));
    const big = { ...aGatewayRequest("ten-megabytes"), output: "x".repeat(10 * 1024 * 1024) };
    writeRequestFile(stateDir, big);

    const { tracker, reader } = aRecording({ stateDir });
    const report = tracker.openReport!;

    for (const [id, , reason] of bad) {
      const entry = report.unreadable.find((u) => u.file === `requests/${id}.json`);
      expect(entry?.reason, id).toMatch(reason);
      expect(fs.existsSync(requestPath(stateDir, id)), `${id} kept`).toBe(true);
    }
    expect(report.unreadable.find((u) => u.file === "requests/bad name.json")?.reason).toBe("the file name is not a valid request id");
    expect(
      tracker
        .list()
        .items.map((r) => r.requestId)
        .sort(),
    ).toEqual(["good-1", "good-2", "ten-megabytes"]);
    expect(tracker.get("ten-megabytes")?.output).toHaveLength(10 * 1024 * 1024);
    expect(reader.unreadableFiles().map((u) => u.file)).toEqual(report.unreadable.map((u) => u.file));
  });

  it("keep the last good indexed state, and recover when fixed", () => {
    const stateDir = tempStateDir();
    const { tracker, reader, operator } = aRecording({ stateDir });
    tracker.create({ requestId: "flaky", workspace: "gw", state: "queued" });
    const good = readRaw(stateDir, "flaky");
    fs.writeFileSync(requestPath(stateDir, "flaky"), good.slice(0, 30));

    const broken = operator.recover();
    expect(broken.unreadable).toEqual([{ file: "requests/flaky.json", reason: expect.stringMatching(/invalid JSON/) }]);
    expect(tracker.get("flaky")?.state).toBe("queued");
    expect(operator.recover().unreadable).toHaveLength(1);

    fs.writeFileSync(requestPath(stateDir, "flaky"), good);
    expect(operator.recover().unreadable).toEqual([]);
    expect(reader.unreadableFiles()).toEqual([]);
  });

  it("refuse a write to a corrupt file with a clear error, and keep it", () => {
    const stateDir = tempStateDir();
    fs.mkdirSync(path.join(stateDir, "requests"), { recursive: true });
    fs.writeFileSync(requestPath(stateDir, "corrupt"), "{");
    const tracker = aTracker({ stateDir });
    expect(() => tracker.transition("corrupt", "queued")).toThrow(/requests\/corrupt.json: invalid JSON/);
    expect(readRaw(stateDir, "corrupt")).toBe("{");
  });

  it("do not follow a symlink that points outside the state directory", () => {
    const stateDir = tempStateDir();
    const outside = path.join(tempStateDir(), "secret.json");
    fs.writeFileSync(outside, JSON.stringify(aGatewayRequest("linked")));
    fs.mkdirSync(path.join(stateDir, "requests"), { recursive: true });
    fs.symlinkSync(outside, requestPath(stateDir, "linked"));
    const tracker = aTracker({ stateDir });
    expect(tracker.openReport?.unreadable).toEqual([{ file: "requests/linked.json", reason: "is a symbolic link; links are not followed" }]);
    expect(() => tracker.transition("linked", "completed")).toThrow(/symbolic link/);
    expect(JSON.parse(fs.readFileSync(outside, "utf8")).state).toBe("processing");
  });
});
