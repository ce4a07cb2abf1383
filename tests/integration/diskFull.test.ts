import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseRequestText } from "../../lib/stateFiles/requestFile";
import { aTracker, tempStateDir } from "../helpers/stateDir";

/** Every request file parses, and (unless `spares`: inodes a writer keeps for reuse) no temp file is left behind. */
function filesAreWhole(stateDir: string, { spares = false } = {}): Map<string, string> {
  const dir = path.join(stateDir, "requests");
  const names = fs.readdirSync(dir);
  if (!spares) expect(names.filter((name) => !name.endsWith(".json"))).toEqual([]);
  const docs = new Map<string, string>();
  for (const name of names.filter((n) => n.endsWith(".json") && !n.startsWith("."))) {
    const text = fs.readFileSync(path.join(dir, name), "utf8");
    parseRequestText(text, name.slice(0, -5));
    docs.set(name, text);
  }
  return docs;
}

/** A small tmpfs as the state directory, where the machine lets us mount one (root, as in CI here). */
function mountSmallDisk(sizeKb: number): { dir: string; unmount: () => void } | null {
  const dir = tempStateDir();
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKb}k`, "tmpfs", dir], { encoding: "utf8" });
  if (mounted.status !== 0) return null;
  return { dir, unmount: () => spawnSync("umount", [dir]) };
}

afterEach(() => vi.restoreAllMocks());

function exerciseFullDisk(stateDir: string, fill: () => void, free: () => void) {
  const tracker = aTracker({ stateDir });
  for (let i = 0; i < 10; i++) tracker.create({ requestId: `r${i}`, workspace: "gateway", state: "queued", prompt: `prompt ${i}` });
  const before = filesAreWhole(stateDir);
  const indexedBefore = tracker.list().items.map((r) => `${r.requestId}:${r.state}`);

  fill();
  const big = "x".repeat(512 * 1024);
  expect(() => tracker.create({ requestId: "new-one", workspace: "gateway", state: "queued", output: big })).toThrow(
    expect.objectContaining({ code: "NO_SPACE", message: "The disk is full; nothing was changed." }),
  );
  expect(() => tracker.update("r3", { fields: { output: big } })).toThrow(expect.objectContaining({ code: "NO_SPACE" }));
  // The previous state is intact: the same files, whole; the index says what it said.
  expect(filesAreWhole(stateDir)).toEqual(before);
  expect(tracker.list().items.map((r) => `${r.requestId}:${r.state}`)).toEqual(indexedBefore);
  expect(tracker.get("new-one")).toBeNull();

  free();
  tracker.create({ requestId: "new-one", workspace: "gateway", state: "queued", output: big });
  tracker.update("r3", { fields: { output: big } });
  expect(tracker.get("r3")?.output).toHaveLength(big.length);
  expect(filesAreWhole(stateDir, { spares: true }).size).toBe(11);
  tracker.close();
  expect(filesAreWhole(stateDir).size).toBe(11);
}

describe("a full disk", () => {
  it("on a real file system that fills up: a clear error, the previous state intact, writes resume when space returns", (context) => {
    const disk = mountSmallDisk(4096);
    if (!disk) {
      // Not root (or no tmpfs): the injected case below covers the same promises.
      context.skip();
      return;
    }
    const filler = path.join(disk.dir, "filler");
    try {
      exerciseFullDisk(
        disk.dir,
        () => {
          // Fill what is left, then a little more room than a small write needs (but not a big one).
          spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { encoding: "utf8" });
          const stat = fs.statfsSync(disk.dir);
          expect(stat.bavail * stat.bsize).toBeLessThan(64 * 1024);
        },
        () => fs.rmSync(filler),
      );
    } finally {
      disk.unmount();
    }
  });

  it("with ENOSPC injected at each write call: the same, whichever call fails", () => {
    for (const call of ["writeSync", "fsyncSync", "openSync"] as const) {
      const stateDir = tempStateDir();
      let full = false;
      const real = fs[call] as (...args: unknown[]) => unknown;
      vi.spyOn(fs, call).mockImplementation(((...args: unknown[]) => {
        const target = String(call === "openSync" ? args[0] : "");
        if (full && (call !== "openSync" || target.includes(`${path.sep}requests${path.sep}.`))) {
          throw Object.assign(new Error(`ENOSPC: no space left on device, ${call}`), { code: "ENOSPC", syscall: call.replace("Sync", "") });
        }
        return real(...args);
      }) as never);
      exerciseFullDisk(
        stateDir,
        () => (full = true),
        () => (full = false),
      );
      vi.restoreAllMocks();
    }
  });
});
