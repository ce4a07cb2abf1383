import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { claudeMemWorkerQueue } from "../../lib/sources/claudeMemWorkerQueue";
import { claudeMemWorkerAddress, defaultWorkerPort } from "../../lib/sources/workerAddress";
import { WorkerSpellStore, type WorkerSnapshot } from "../../lib/spells/spellStore";
import { readQueue } from "../../lib/sources/queueLook";
import { readOne } from "../../lib/sources/sourceQueue";
import { openSourceDb } from "../../lib/sqlite/openSourceDb";
import { tempParent } from "../helpers/stateDir";
import { thrown } from "../helpers/thrown";

// The spells' rules, driven look by look with a clock of the test's own (the real worker is in
// tests/integration/claudeMem13.test.ts).
const T0 = 1_800_000_000_000;
const MIN = 60_000;
const snap = (queueDepth: number, more: Partial<WorkerSnapshot> = {}): { snapshot: WorkerSnapshot } => ({
  snapshot: { pid: 100, version: "13.25.3", queueDepth, isProcessing: queueDepth > 0, parkedSessions: 0, activeSessions: 1, degraded: [], ...more },
});

function aStore() {
  const file = path.join(fs.mkdtempSync(path.join(tempParent(), "spells-")), "spells.db");
  const store = new WorkerSpellStore(file);
  const read = (now: number) => {
    const db = openSourceDb(file, "test");
    try {
      const queue = claudeMemWorkerQueue(file);
      const summary = readQueue(db, queue, now, { newest: 0, stuck: 10 });
      const ids = db.prepare("SELECT seq FROM spells ORDER BY seq").pluck().all() as number[];
      return { summary, spells: ids.map((seq) => readOne(db, queue, `claude-mem-queue-${seq}`, now, null)!) };
    } finally {
      db.close();
    }
  };
  return { store, read, file };
}

describe("claude-mem 13's worker queue, as spells", () => {
  it("a spell begins when work arrives and completes when the queue is empty; an idle worker makes none", () => {
    const { store, read } = aStore();
    expect(store.observe(snap(0), T0)).toBe(false);
    store.observe(snap(2), T0 + 1000);
    store.observe(snap(1), T0 + 2000);
    store.observe(snap(0), T0 + 3000);
    store.observe(snap(0), T0 + 4000);
    const [spell] = read(T0 + 5000).spells;
    expect(spell!.request).toMatchObject({ requestId: "claude-mem-queue-1", state: "completed", createdAt: T0 + 1000, completedAt: T0 + 3000 });
    expect(spell!.note).toBe("2 done");
    expect(spell!.steps!.map((step) => [step.name, step.summary])).toEqual([
      ["queued", "2 observations in the queue"],
      ["progress", "queue 2 → 1, 1 done, processing"],
      ["queue empty", "every observation left the queue"],
    ]);
  });

  it("work done while as much arrives is progress, so not stuck; a queue that does not go down is, after claude-mem's 5 minutes, with what the worker reports", () => {
    const { store, read } = aStore();
    store.observe(snap(3), T0);
    // One done and one arrived: the depth stays 3, but the queue moves.
    store.arrived();
    store.observe(snap(3), T0 + 4 * MIN);
    const early = read(T0 + 8 * MIN);
    expect([early.summary.stuck, early.spells[0]!.stuck]).toEqual([0, null]);
    store.observe(snap(3, { isProcessing: false, parkedSessions: 2, degraded: ["claude_cli: Claude executable not found"] }), T0 + 5 * MIN);
    const later = read(T0 + 10 * MIN);
    expect(later.summary.stuck).toBe(1);
    const stuck = later.summary.stuckMessages[0]!;
    expect(stuck.request.state).toBe("queued");
    expect(stuck.stuck).toBe(
      "3 observations waiting 6m with no progress (the queue last went down 6m ago); 2 sessions parked, waiting for an agent slot; claude-mem reports claude_cli: Claude executable not found; they are in the worker's memory only: stopping it loses them",
    );
  });

  it("a worker that stops, or is replaced by another pid, with work in memory: the spell fails saying the work was lost", () => {
    const { store, read } = aStore();
    store.observe(snap(4), T0);
    store.observe({ down: "nothing answers" }, T0 + 1000);
    store.observe(snap(1, { pid: 200 }), T0 + 2000);
    store.observe(snap(1, { pid: 300 }), T0 + 3000);
    const spells = read(T0 + 4000).spells;
    expect(spells.map((spell) => [spell.request.state, spell.request.error])).toEqual([
      ["failed", "claude-mem's worker (pid 100) stopped with 4 observations in its queue; claude-mem keeps the queue in memory, so they were lost"],
      [
        "failed",
        "claude-mem's worker pid 200 was replaced by pid 300 with 1 observation in its queue; claude-mem keeps the queue in memory, so they were lost",
      ],
      ["processing", undefined],
    ]);
  });

  it("a long spell keeps its first steps and its latest, 500 in all", () => {
    const { store, file } = aStore();
    store.observe(snap(1), T0);
    for (let i = 0; i < 700; i++) store.observe(snap(2 + (i % 2)), T0 + i + 1);
    store.close();
    const db = new Database(file, { readonly: true });
    const steps = db.prepare("SELECT at FROM steps ORDER BY n").pluck().all() as number[];
    db.close();
    expect(steps).toHaveLength(500);
    expect(steps[0]).toBe(T0);
    expect(steps.at(-1)).toBe(T0 + 700);
    expect(steps[498]).toBe(T0 + 498);
  });

  it("the worker's address: the port of claude-mem's settings (top level or under env), else its default; a worker elsewhere is refused", () => {
    const dir = fs.mkdtempSync(path.join(tempParent(), "claude-mem-"));
    expect(claudeMemWorkerAddress(dir, 1005)).toEqual({ host: "127.0.0.1", port: 37705, settings: null });
    expect(defaultWorkerPort(0)).toBe(37700);
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ CLAUDE_MEM_WORKER_PORT: "41234" }));
    expect(claudeMemWorkerAddress(dir)).toEqual({ host: "127.0.0.1", port: 41234, settings: path.join(dir, "settings.json") });
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ env: { CLAUDE_MEM_WORKER_PORT: 41235, CLAUDE_MEM_WORKER_HOST: "localhost" } }));
    expect(claudeMemWorkerAddress(dir).port).toBe(41235);
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ CLAUDE_MEM_WORKER_PORT: "not a port" }));
    expect(claudeMemWorkerAddress(dir, 0)).toEqual({ host: "127.0.0.1", port: 37700, settings: null });
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ CLAUDE_MEM_WORKER_HOST: "10.0.0.5" }));
    expect(thrown(() => claudeMemWorkerAddress(dir))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("reqwatch reads only a worker on this machine"),
    });
    // Settings that are a FIFO are not opened (it would wait for a writer): claude-mem's defaults.
    fs.rmSync(path.join(dir, "settings.json"));
    spawnSync("mkfifo", [path.join(dir, "settings.json")]);
    expect(claudeMemWorkerAddress(dir, 0)).toEqual({ host: "127.0.0.1", port: 37700, settings: null });
  });
});
