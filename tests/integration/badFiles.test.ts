import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openRoles } from "../../lib/tracker";
import { BAD_FILES_CORPUS, BAD_FILES_EXPECTED, GOOD_IDS as GOOD, goodRequestFile as goodFile, plantBadFiles as plant } from "../helpers/badFiles";
import { aRecording, tempStateDir } from "../helpers/stateDir";

function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of fs.readdirSync(dir)) {
    const stat = fs.lstatSync(path.join(dir, name));
    files.set(name, stat.isFile() && stat.size < 1024 * 1024 ? fs.readFileSync(path.join(dir, name)).toString("base64") : `${stat.mode}:${stat.size}`);
  }
  return files;
}

function expectReported(reported: { file: string; reason: string }[], expected: Map<string, string>) {
  const byFile = new Map(reported.map((item) => [item.file, item.reason]));
  for (const [name, reason] of expected) {
    expect(byFile.get(`requests/${name}`), name).toContain(reason);
  }
  expect(reported).toHaveLength(expected.size);
}

// Each bad file is reported with its reason, never deleted or changed, and never hides a good file.
describe("a corpus of bad request files", () => {
  it("holds at least 40 files, each with the reason it must be reported with", () => {
    expect(Object.keys(BAD_FILES_EXPECTED).length).toBeGreaterThanOrEqual(40);
    expect(fs.readdirSync(BAD_FILES_CORPUS).sort()).toEqual(Object.keys(BAD_FILES_EXPECTED).sort());
  });

  it("at start-up: every bad file is reported with its reason, kept byte for byte, and the good ones load", () => {
    const stateDir = tempStateDir();
    const expected = plant(stateDir);
    const before = snapshot(path.join(stateDir, "requests"));
    const { tracker, reader } = aRecording({ stateDir });
    expectReported(
      tracker.openReport!.unreadable.filter((item) => item.file.startsWith("requests/")),
      expected,
    );
    expectReported(reader.unreadableFiles(), expected);
    expect(
      tracker
        .list({})
        .items.map((request) => request.requestId)
        .sort(),
    ).toEqual(GOOD);
    expect(snapshot(path.join(stateDir, "requests"))).toEqual(before);
    // Still usable: the good requests move on, the bad files stay as they were.
    tracker.transition("good-1", "processing");
    tracker.close();
    // A second start (warm index) reports the same, and still deletes nothing.
    const again = openRoles({ stateDir });
    expectReported(again.reader.unreadableFiles(), expected);
    again.close();
    const after = snapshot(path.join(stateDir, "requests"));
    after.delete("good-1.json");
    before.delete("good-1.json");
    expect(after).toEqual(before);
  });

  it("while running: the watcher reports each bad file as it arrives, and keeps ingesting the good ones", async () => {
    const stateDir = tempStateDir();
    const { tracker, reader, upkeep } = aRecording({ stateDir });
    // Reconciliation would find them too; a long interval leaves it to the watcher.
    const ingest = upkeep.startIngest({ reconcileEveryMs: 600_000 });
    const expected = plant(stateDir);
    await expect.poll(() => tracker.list({}).items.length, { timeout: 10_000 }).toBe(GOOD.length);
    await expect
      .poll(() => [...expected.keys()].filter((name) => !reader.unreadableFiles().some((item) => item.file === `requests/${name}`)), { timeout: 10_000 })
      .toEqual([]);
    expectReported(reader.unreadableFiles(), expected);
    ingest.stop();
  });

  it("a file its reader may not read is reported as such (checked as an unprivileged user)", () => {
    const stateDir = tempStateDir();
    fs.mkdirSync(path.join(stateDir, "requests"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "requests", "good-1.json"), goodFile("good-1"));
    fs.writeFileSync(path.join(stateDir, "requests", "secret.json"), goodFile("secret"), { mode: 0o000 });
    let runAs: { uid: number; gid: number } | undefined;
    if (process.getuid?.() === 0) {
      // Root reads anything: run the reader as nobody, on a state directory nobody owns (but not the file).
      runAs = { uid: 65534, gid: 65534 };
      fs.chmodSync(path.dirname(stateDir), 0o755);
      fs.chmodSync(stateDir, 0o777);
      fs.chmodSync(path.join(stateDir, "requests"), 0o777);
      fs.chownSync(path.join(stateDir, "requests", "good-1.json"), 65534, 65534);
    }
    const result = spawnSync(process.execPath, [path.join(__dirname, "../../bin/reqwatch.js"), "recover", "--json", "--state-dir", stateDir], {
      encoding: "utf8",
      ...runAs,
    });
    expect(result.stderr).toBe("");
    const report = JSON.parse(result.stdout);
    expect(report.unreadable).toEqual([{ file: "requests/secret.json", reason: "cannot be read (permission denied)" }]);
    expect(fs.existsSync(path.join(stateDir, "requests", "secret.json"))).toBe(true);
  });

  it("from the CLI: get and explain say why a request cannot be read (the file, the line and column), never that it does not exist; list names them on stderr", () => {
    const stateDir = tempStateDir();
    const expected = plant(stateDir);
    const reqwatch = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(__dirname, "../../bin/reqwatch.js"), ...args, "--state-dir", stateDir], { encoding: "utf8" });
    for (const [id, reason] of [
      ["truncated-in-string", expected.get("truncated-in-string.json")!],
      ["missing-workspace", expected.get("missing-workspace.json")!],
    ] as const) {
      for (const command of ["get", "explain"]) {
        const result = reqwatch(command, id);
        expect(result.status, `${command} ${id}`).toBe(1);
        expect(result.stdout).toBe("");
        expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
        expect(result.stderr).toContain(`reqwatch: Request ${id} cannot be read: requests/${id}.json: `);
        expect(result.stderr).toContain(reason);
      }
    }
    expect(reqwatch("get", "truncated-in-string").stderr).toMatch(/line 1 column \d+/);
    expect(reqwatch("get", "no-such-request").stderr).toBe("reqwatch: Request no-such-request does not exist (it may have been cleaned up).\n");

    const listed = reqwatch("list", "--json");
    expect(listed.status).toBe(0);
    expect((JSON.parse(listed.stdout) as { items: { requestId: string }[] }).items.map((request) => request.requestId).sort()).toEqual(GOOD);
    const note = listed.stderr.trimEnd().split("\n");
    expect(note[0]).toBe(`reqwatch: ${expected.size} request files cannot be read, so they are in no list (kept as they are):`);
    expect(note.slice(1, 6)).toHaveLength(5);
    for (const line of note.slice(1, 6)) expect(line).toMatch(/^reqwatch: {3}requests\/.+\.json: ./);
    expect(note.at(-1)).toBe(`reqwatch:   and ${expected.size - 5} more (reqwatch recover lists every one)`);
  });
});
