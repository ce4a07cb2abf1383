import { expect, it } from "vitest";
import { readChanges } from "../../lib/db/changes";
import { openIndex } from "../../lib/db/openIndex";
import { aTracker, readRaw, tempStateDir } from "../helpers/stateDir";
import { startWorker, waitForExit } from "../helpers/processes";

it("4 processes x 500 read-modify-write updates on the same 10 requests lose none", async () => {
  const stateDir = tempStateDir();
  const tracker = aTracker({ stateDir });
  const ids = Array.from({ length: 10 }, (_, i) => `shared-${i}`);
  for (const requestId of ids) tracker.create({ requestId, workspace: "race", counter: 0 } as never);

  const workers = Array.from({ length: 4 }, () => startWorker("incrementCounters.cjs", [stateDir, "500", ...ids]));
  // What a worker that fails says, in the failure's message.
  let stderr = "";
  for (const worker of workers) worker.stderr?.on("data", (chunk) => (stderr += chunk));
  const codes = await Promise.all(workers.map(waitForExit));
  expect(codes, stderr).toEqual([0, 0, 0, 0]);

  let total = 0;
  for (const id of ids) {
    const onDisk = JSON.parse(readRaw(stateDir, id));
    expect(onDisk.counter).toBe(200);
    expect(onDisk.version).toBe(201);
    expect(onDisk.transitions).toHaveLength(201);
    expect(tracker.get(id)).toEqual(onDisk);
    total += onDisk.counter;
  }
  expect(total).toBe(4 * 500);

  // The change feed holds every one of those writes, in commit order across the processes.
  const { db } = openIndex(`${stateDir}/index.db`);
  const changes = readChanges(db, 0, 10_000);
  db.close();
  expect(changes).toHaveLength(10 + 2000);
  const lastVersion = new Map<string, number>();
  for (const change of changes) {
    expect(change.request!.version).toBe((lastVersion.get(change.requestId) ?? 0) + 1);
    lastVersion.set(change.requestId, change.request!.version);
  }
}, 120_000);
