import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { adoptStateDir } from "../../lib/store/ownership";
import { openRoles, openTracker, type Recording } from "../../lib/tracker";
import type { Tracker, TrackerOptions } from "../../lib/types";

const made: string[] = [];
const opened: { close(): void }[] = [];

afterEach(() => {
  for (const tracker of opened.splice(0)) {
    try {
      tracker.close();
    } catch {
      // Already closed by the test.
    }
  }
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh parent folder for a test, removed after it. */
export function tempParent(): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-test-"));
  made.push(parent);
  return parent;
}

/**
 * A fresh state directory that reqwatch manages (it holds the marker, as one reqwatch created
 * does), removed after the test with its parent (where tests put files "outside" it).
 */
export function tempStateDir(): string {
  const dir = path.join(tempParent(), "state");
  fs.mkdirSync(dir);
  adoptStateDir(dir);
  return dir;
}

/** A fresh folder another program writes (no marker): reqwatch observes it read-only. */
export function tempForeignDir(): string {
  const dir = path.join(tempParent(), "state");
  fs.mkdirSync(dir);
  return dir;
}

/** The library's tracker (what a gateway or a worker holds) on a fresh state directory (or the one given), closed after the test. */
export function aTracker(options: TrackerOptions = {}): Tracker {
  const tracker = openTracker({ stateDir: options.stateDir ?? tempStateDir(), ...options });
  opened.push(tracker);
  return tracker;
}

/**
 * The folder as reqwatch's programs open it (the tracker beside the reader, the operator and the
 * index's upkeep) on a fresh state directory (or the one given), closed after the test.
 */
export function aRecording(options: TrackerOptions = {}): Recording {
  const recording = openRoles({ stateDir: options.stateDir ?? tempStateDir(), ...options });
  opened.push(recording);
  return recording;
}

export function requestPath(stateDir: string, id: string): string {
  return path.join(stateDir, "requests", `${id}.json`);
}

export function readRaw(stateDir: string, id: string): string {
  return fs.readFileSync(requestPath(stateDir, id), "utf8");
}
