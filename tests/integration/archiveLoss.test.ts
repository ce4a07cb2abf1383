import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../lib/sqlite/openDatabase";
import { anOldCompletedRequest, writeRequestFile } from "../helpers/builders";
import { aRecording, tempStateDir } from "../helpers/stateDir";

const IDS = Array.from({ length: 10 }, (_, i) => `old-${i}`);

function removeArchive(stateDir: string): void {
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `archive.db${suffix}`), { force: true });
}

function overwriteArchive(stateDir: string): void {
  const fd = fs.openSync(path.join(stateDir, "archive.db"), "r+");
  fs.writeSync(fd, Buffer.alloc(64 * 1024, 0xab), 0, 64 * 1024, 0);
  fs.closeSync(fd);
}

/** The request ids archive.db on disk holds, read by a new connection (none when it is missing or unreadable). */
function archivedOnDisk(stateDir: string): Set<string> {
  const file = path.join(stateDir, "archive.db");
  if (!fs.existsSync(file)) return new Set();
  const db = openDatabase(file, { readonly: true, fileMustExist: true });
  try {
    return new Set(db.prepare("SELECT request_id FROM archived_requests").pluck().all() as string[]);
  } catch {
    return new Set();
  } finally {
    db.close();
  }
}

/** After a restart (every tracker closed), each request is a file or a copy in archive.db on disk. */
function expectNoneLost(stateDir: string): void {
  const archived = archivedOnDisk(stateDir);
  const lost = IDS.filter((id) => !fs.existsSync(path.join(stateDir, "requests", `${id}.json`)) && !archived.has(id));
  expect(lost).toEqual([]);
}

function seeded(): string {
  const stateDir = tempStateDir();
  for (const id of IDS) writeRequestFile(stateDir, anOldCompletedRequest(id));
  return stateDir;
}

describe("archive.db lost while a tracker has it open", () => {
  it("deleted, then a cleanup: the cleanup archives into a new archive.db, and a restarted tracker restores from it", () => {
    const stateDir = seeded();
    const { tracker, operator } = aRecording({ stateDir });
    // The running tracker opens the archive (an earlier cleanup, with nothing old enough yet).
    expect(operator.cleanup({ olderThanMs: 100 * 3_600_000 }).archived).toBe(0);
    removeArchive(stateDir);
    const report = operator.cleanup();
    expect(report.ids.sort()).toEqual([...IDS].sort());
    tracker.close();

    expectNoneLost(stateDir);
    expect(archivedOnDisk(stateDir).size).toBe(IDS.length);
    const restarted = aRecording({ stateDir }).operator;
    expect(restarted.restore("old-3")).toMatchObject({ requestId: "old-3", state: "completed" });
  });

  it("deleted during a cleanup, after it opened the archive and before it wrote its copies: no file goes whose copy is not on disk", () => {
    const stateDir = seeded();
    // The cleanup asks the clock for its cutoff, then for the archive's timestamp: archive.db is deleted there.
    let [armed, calls] = [false, 0];
    const { tracker, operator } = aRecording({
      stateDir,
      now: () => {
        if (armed && ++calls === 2) removeArchive(stateDir);
        return Date.now();
      },
    });
    operator.cleanup({ olderThanMs: 100 * 3_600_000 });
    armed = true;
    const report = operator.cleanup();
    expect(report.ids).toEqual([]);
    expect(report.skipped).toHaveLength(IDS.length);
    expect(report.skipped[0]!.reason).toMatch(/archived copy is not in archive.db on disk/);
    // The next cleanup archives into a new archive.db, and goes through.
    armed = false;
    expect(operator.cleanup().ids).toHaveLength(IDS.length);
    tracker.close();
    expectNoneLost(stateDir);
  });

  it("overwritten with garbage during a cleanup: no file goes whose copy is not readable on disk", () => {
    const stateDir = seeded();
    let [armed, calls] = [false, 0];
    const { tracker, operator } = aRecording({
      stateDir,
      now: () => {
        if (armed && ++calls === 2) overwriteArchive(stateDir);
        return Date.now();
      },
    });
    operator.cleanup({ olderThanMs: 100 * 3_600_000 });
    armed = true;
    try {
      operator.cleanup();
    } catch {
      // Refused by the damaged archive: nothing was removed.
    }
    tracker.close();
    expectNoneLost(stateDir);
  });
});
