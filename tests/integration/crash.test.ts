import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect, it } from "vitest";
import { parseRequestText } from "../../lib/stateFiles/requestFile";
import { aTracker, tempStateDir } from "../helpers/stateDir";
import { startWorker, waitForExit, waitForLine } from "../helpers/processes";

const KILLS = 200;

it(`leaves every file whole and the index in agreement after ${KILLS} SIGKILLs mid-write`, async () => {
  const stateDir = tempStateDir();
  for (let kill = 0; kill < KILLS; kill++) {
    const worker = startWorker("writeLoop.cjs", [stateDir, String(kill * 1000)]);
    // Ready once its first write is whole; then killed a little later, somewhere inside a write or between two.
    await waitForLine(worker, "ready");
    await sleep(2 + ((kill * 37) % 25));
    worker.kill("SIGKILL");
    await waitForExit(worker);
  }

  const dir = path.join(stateDir, "requests");
  const files = fs.readdirSync(dir).filter((name) => name.endsWith(".json") && !name.startsWith("."));
  for (const name of files) {
    // Every file parses and validates: no torn write ever replaced a whole one.
    parseRequestText(fs.readFileSync(path.join(dir, name), "utf8"), name.slice(0, -5));
  }
  const counters = files.filter((name) => name.startsWith("c")).map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")).counter);
  // The kills landed in the loop, not before it: every worker made at least its first write.
  expect(counters.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(KILLS);

  const tracker = aTracker({ stateDir });
  expect(tracker.openReport?.unreadable).toEqual([]);
  expect(fs.readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  const indexed = new Map<string, unknown>();
  let cursor: string | undefined;
  do {
    const page = tracker.list({ limit: 1000, cursor });
    for (const item of page.items) indexed.set(item.requestId, item);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  expect(indexed.size).toBe(files.length);
  for (const name of files) {
    const id = name.slice(0, -5);
    expect(tracker.get(id)).toEqual(JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")));
  }
}, 300_000);
