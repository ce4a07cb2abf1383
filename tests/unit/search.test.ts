import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { aRecording, aTracker, tempStateDir } from "../helpers/stateDir";

const ids = (page: { items: { requestId: string }[] }) => page.items.map((item) => item.requestId).sort();

describe("text search over prompt, output and error", () => {
  it("finds every word, by word or word start, in any of the three fields", () => {
    const tracker = aTracker();
    tracker.create({ requestId: "p", workspace: "w", prompt: "Refactor the retry loop in worker.ts" });
    tracker.create({ requestId: "o", workspace: "w", state: "processing" });
    tracker.transition("o", "completed", { fields: { output: "Retrying with exponential back-off now" } });
    tracker.create({ requestId: "e", workspace: "w", state: "processing" });
    tracker.transition("e", "failed", { fields: { error: "upstream 529: overloaded" } });
    tracker.create({ requestId: "none", workspace: "w", prompt: "unrelated" });

    expect(ids(tracker.list({ text: "retry" }))).toEqual(["o", "p"]);
    expect(ids(tracker.list({ text: "retry loop" }))).toEqual(["p"]);
    expect(ids(tracker.list({ text: "OVERLOAD" }))).toEqual(["e"]);
    expect(ids(tracker.list({ text: "529" }))).toEqual(["e"]);
    expect(ids(tracker.list({ text: "back-off" }))).toEqual(["o"]);
    expect(ids(tracker.list({ text: "retry", states: ["completed", "created"] }))).toEqual(["o", "p"]);
    expect(ids(tracker.list({ text: "nowhere" }))).toEqual([]);
  });

  it("follows changes: new text is found, old text is not, and a removed request leaves the index", () => {
    const { tracker, operator } = aRecording();
    tracker.create({ requestId: "r", workspace: "w", state: "processing", prompt: "first words" });
    tracker.transition("r", "failed", { fields: { error: "boom" } });
    tracker.transition("r", "queued", { fields: { prompt: "second attempt" } });
    expect(ids(tracker.list({ text: "first" }))).toEqual([]);
    // The retry moved the failed attempt's error into its step of the history.
    expect(ids(tracker.list({ text: "second boom" }))).toEqual([]);
    expect(ids(tracker.list({ text: "second" }))).toEqual(["r"]);
    tracker.transition("r", "processing");
    tracker.transition("r", "completed");
    operator.cleanup({ olderThanMs: 0 });
    expect(ids(tracker.list({ text: "second" }))).toEqual([]);
  });

  it("treats quotes and operators as text, and refuses a search without a word", () => {
    const tracker = aTracker();
    tracker.create({ requestId: "q", workspace: "w", prompt: 'say "hello" OR NOT' });
    expect(ids(tracker.list({ text: '"hello" OR' }))).toEqual(["q"]);
    expect(ids(tracker.list({ text: "NEAR( AND *" }))).toEqual([]);
    expect(() => tracker.list({ text: '"*"' })).toThrow(/needs at least one word/);
  });

  it("indexes files written by other tools, and survives an index rebuild", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "foreign", prompt: "summarise the changelog" }));
    let tracker = aTracker({ stateDir });
    expect(ids(tracker.list({ text: "changelog" }))).toEqual(["foreign"]);
    tracker.close();
    fs.rmSync(`${stateDir}/index.db`);
    tracker = aTracker({ stateDir });
    expect(ids(tracker.list({ text: "summarise" }))).toEqual(["foreign"]);
  });
});

describe("the text index after a rebuild", () => {
  it("is filled afterwards, in steps or by the first search, and misses nothing written meanwhile", () => {
    const stateDir = tempStateDir();
    for (let i = 0; i < 30; i++) writeRequestFile(stateDir, aRequest({ requestId: `old-${i}`, prompt: `needle number ${i}` }));
    const { tracker, upkeep } = aRecording({ stateDir });
    expect(upkeep.backfillTextIndex(10)).toBe(20);
    tracker.update("old-25", { fields: { prompt: "changed before its turn" } });
    tracker.create({ requestId: "new-1", workspace: "w", prompt: "needle arrived later" });
    // The search fills the rest first.
    expect(tracker.list({ text: "needle", limit: 100 }).items).toHaveLength(30);
    expect(ids(tracker.list({ text: "changed turn" }))).toEqual(["old-25"]);
    expect(upkeep.backfillTextIndex()).toBe(0);
  });
});
