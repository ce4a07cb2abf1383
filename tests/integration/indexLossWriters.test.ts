import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, it, vi } from "vitest";
import { openIndex, readMeta, removeIndexFiles, writeMeta, type IndexDb } from "../../lib/db/openIndex";
import { withWritersLock, writersLockFree } from "../../lib/db/writeLock";
import { aTracker, tempStateDir } from "../helpers/stateDir";
import { eventually, startWorker, waitForExit } from "../helpers/processes";

const IDS = Array.from({ length: 8 }, (_, i) => `shared-${i}`);

function removeIndex(stateDir: string): void {
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });
}

/** A writer process (tests/helpers/workers/countAcked.cjs) and what it has said so far. */
function startWriter(stateDir: string, stopFile: string): { child: ChildProcess; out: () => string; acked: () => number } {
  const child = startWorker("countAcked.cjs", [stateDir, stopFile, ...IDS]);
  let out = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  child.stderr!.on("data", (chunk) => (out += chunk));
  const acked = () => Math.max(0, ...[...out.matchAll(/^acked (\d+)$/gm)].map((m) => Number(m[1])));
  return { child, out: () => out, acked };
}

/** Wait until each writer has acknowledged `more` updates beyond what it had at the call. */
async function progress(writers: ReturnType<typeof startWriter>[], more: number): Promise<void> {
  const from = writers.map((writer) => writer.acked());
  await eventually(() => (writers.every((writer, i) => writer.acked() >= from[i]! + more) ? true : undefined), 60_000);
}

async function stopAll(writers: ReturnType<typeof startWriter>[], stopFile: string): Promise<Record<string, number>[]> {
  fs.writeFileSync(stopFile, "");
  const codes = await Promise.all(writers.map((writer) => waitForExit(writer.child)));
  expect(codes, writers.map((writer) => writer.out()).join("\n")).toEqual(writers.map(() => 0));
  return writers.map((writer) => JSON.parse(/^done (.*)$/m.exec(writer.out())![1]!) as Record<string, number>);
}

/** Every acknowledged update is in the files, and the index (opened as it is, without recovery) says what the files say. */
function expectEveryAckKept(stateDir: string, acks: Record<string, number>[]): void {
  const tracker = aTracker({ stateDir, recover: false });
  for (const id of IDS) {
    const onDisk = JSON.parse(fs.readFileSync(path.join(stateDir, "requests", `${id}.json`), "utf8")) as { counter: number };
    expect(onDisk.counter, id).toBe(acks.reduce((sum, acked) => sum + acked[id]!, 0));
    expect(tracker.get(id), id).toEqual(onDisk);
  }
}

function seeded(): { stateDir: string; stopFile: string } {
  const stateDir = tempStateDir();
  const tracker = aTracker({ stateDir });
  for (const requestId of IDS) tracker.create({ requestId, workspace: "race", counter: 0 } as never);
  tracker.close();
  return { stateDir, stopFile: path.join(path.dirname(stateDir), `${path.basename(stateDir)}.stop`) };
}

it("the writers' lock holds between a connection to a deleted index.db and one to the new file", () => {
  const stateDir = tempStateDir();
  aTracker({ stateDir }).close();
  const file = path.join(stateDir, "index.db");
  const old = openIndex(file).db;
  removeIndex(stateDir);
  const fresh = openIndex(file).db;
  try {
    withWritersLock(fresh, () => expect(writersLockFree(old)).toBe(false));
    expect(writersLockFree(old)).toBe(true);
  } finally {
    old.close();
    fresh.close();
  }
});

it("removing an index leaves alone the new one another process makes the moment the old file is gone", () => {
  const stateDir = tempStateDir();
  aTracker({ stateDir }).close();
  const file = path.join(stateDir, "index.db");
  const rmSync = fs.rmSync;
  let other: IndexDb | undefined;
  // The other process, between two of the removals: index.db gone, it opens a new one and writes.
  const between = vi.spyOn(fs, "rmSync").mockImplementation((target, options) => {
    rmSync(target, options);
    if (other || fs.existsSync(file)) return;
    other = openIndex(file).db;
    writeMeta(other, "written-by", "the other process");
  });
  try {
    removeIndexFiles(file);
  } finally {
    between.mockRestore();
  }
  const third = openIndex(file).db;
  try {
    expect(readMeta(third, "written-by")).toBe("the other process");
  } finally {
    third.close();
    other?.close();
  }
});

it("index.db deleted while a writer runs, and a writer started after: every acknowledged update is kept, in the files and the index", async () => {
  const { stateDir, stopFile } = seeded();
  const first = startWriter(stateDir, stopFile);
  await progress([first], 40);
  removeIndex(stateDir);
  const second = startWriter(stateDir, stopFile);
  await progress([first, second], 300);
  const acks = await stopAll([first, second], stopFile);
  expect([first.out(), second.out()].join("\n")).not.toMatch(/^failed/m);
  expectEveryAckKept(stateDir, acks);
}, 120_000);

it("index.db deleted twice while two writers run: every acknowledged update is kept, in the files and the index", async () => {
  const { stateDir, stopFile } = seeded();
  const writers = [startWriter(stateDir, stopFile), startWriter(stateDir, stopFile)];
  await progress(writers, 40);
  removeIndex(stateDir);
  await progress(writers, 100);
  removeIndex(stateDir);
  await progress(writers, 100);
  const acks = await stopAll(writers, stopFile);
  expect(writers.map((writer) => writer.out()).join("\n")).not.toMatch(/^failed/m);
  expectEveryAckKept(stateDir, acks);
}, 120_000);

it("index.db overwritten with garbage while two writers run: they rebuild it and go on; no update fails, every acknowledged one is kept", async () => {
  const { stateDir, stopFile } = seeded();
  const writers = [startWriter(stateDir, stopFile), startWriter(stateDir, stopFile)];
  await progress(writers, 40);
  const damaged = fs.statSync(path.join(stateDir, "index.db")).ino;
  const fd = fs.openSync(path.join(stateDir, "index.db"), "r+");
  fs.writeSync(fd, Buffer.alloc(64 * 1024, 0xab), 0, 64 * 1024, 0);
  fs.closeSync(fd);
  await progress(writers, 300);
  const acks = await stopAll(writers, stopFile);
  expect(writers.map((writer) => writer.out()).join("\n")).not.toMatch(/^failed/m);
  // Noticed: the damaged file was replaced by a rebuilt one.
  expect(fs.statSync(path.join(stateDir, "index.db")).ino).not.toBe(damaged);
  expectEveryAckKept(stateDir, acks);
}, 120_000);
