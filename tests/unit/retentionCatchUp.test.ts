import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { aRecording } from "../helpers/stateDir";

// The retention's first run on a folder with a week of finished requests past it: it goes through
// them in many small paced steps (lib/actions/retention.ts), and must still take exactly those past it.
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

describe("the retention's first catch-up", () => {
  it("archives every finished request of the week past the retention, in its small steps, and keeps the rest", async () => {
    const clock = { at: Date.UTC(2026, 10, 1) };
    const { tracker, reader, operator, close } = aRecording({ now: () => clock.at });
    const finishedAt = new Map<string, number>();
    tracker.create({ requestId: "waiting", workspace: "w", state: "queued" });
    // 140 requests finished 72 minutes apart: a week of them.
    for (let i = 0; i < 140; i++) {
      clock.at += 72 * MINUTE;
      const id = `r${String(i).padStart(3, "0")}`;
      tracker.create({ requestId: id, workspace: `w${i % 3}`, state: "processing" });
      tracker.transition(id, i % 4 === 0 ? "failed" : "completed", i % 4 === 0 ? { fields: { error: "boom" } } : {});
      finishedAt.set(id, clock.at);
    }
    clock.at += 12 * 60 * MINUTE;
    const past = [...finishedAt].filter(([, at]) => at <= clock.at - DAY).map(([id]) => id);
    expect(past.length).toBeGreaterThan(100);

    const run = await operator.runRetention();
    expect(run).toMatchObject({ removed: past.length, skipped: 0, error: null });
    const kept = fs
      .readdirSync(reader.stateDir.requestsDir)
      .filter((f) => f.endsWith(".json"))
      .map((f) => f.slice(0, -".json".length))
      .sort();
    expect(kept).toEqual(["waiting", ...[...finishedAt.keys()].filter((id) => !past.includes(id))].sort());
    const entry = operator.actions.entry(run!.entryId!);
    expect(entry).toMatchObject({ by: "retention", status: "done", changed: past.length });
    expect([...entry.changedIds].sort()).toEqual(past.sort());
    // Each is in the archive: the first and the last of them come back as they were.
    for (const id of [past[0]!, past.at(-1)!]) {
      operator.restore(id);
      expect(tracker.get(id)?.state).toBe(Number(id.slice(1)) % 4 === 0 ? "failed" : "completed");
    }
    close();
  });
});
