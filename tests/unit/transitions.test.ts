import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { isReqwatchError } from "../../lib/model/errors";
import { STATES, TRANSITIONS, canTransition } from "../../lib/model/states";
import { aRequestIn, writeRequestFile } from "../helpers/builders";
import { aTracker, readRaw, tempStateDir } from "../helpers/stateDir";

const pairs = STATES.flatMap((from) => STATES.map((to) => ({ from, to })));

describe("the transition table", () => {
  it("allows exactly the lifecycle's moves, and a person's cancel of a request not yet finished", () => {
    const allowed = pairs.filter(({ from, to }) => canTransition(from, to)).map(({ from, to }) => `${from}->${to}`);
    expect(allowed.sort()).toEqual(
      [
        "created->queued",
        "created->processing",
        "queued->processing",
        "processing->completed",
        "processing->failed",
        "processing->timeout",
        "processing->queued",
        "failed->queued",
        "timeout->queued",
        "created->failed",
        "queued->failed",
      ].sort(),
    );
  });

  it("leaves completed with no way out", () => {
    expect(TRANSITIONS.completed).toEqual([]);
  });
});

describe.each(pairs.filter(({ from, to }) => canTransition(from, to)))("allowed: $from -> $to", ({ from, to }) => {
  it("moves the request, records the step and bumps the version", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequestIn(from, "r1"));
    const tracker = aTracker({ stateDir });

    const moved = tracker.transition("r1", to, { reason: "test" });

    expect(moved.state).toBe(to);
    expect(moved.previousState).toBe(from);
    expect(moved.version).toBe(4);
    expect(moved.transitions?.at(-1)).toMatchObject({ from, to, reason: "test" });
    expect(JSON.parse(readRaw(stateDir, "r1"))).toEqual(moved);
    expect(tracker.get("r1")).toEqual(moved);
  });
});

describe.each(pairs.filter(({ from, to }) => !canTransition(from, to)))("refused: $from -> $to", ({ from, to }) => {
  it("throws an error naming both states and changes nothing", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequestIn(from, "r1"));
    const tracker = aTracker({ stateDir });
    const fileBefore = readRaw(stateDir, "r1");
    const indexBefore = tracker.get("r1");

    let thrown: unknown;
    try {
      tracker.transition("r1", to);
    } catch (error) {
      thrown = error;
    }

    expect(isReqwatchError(thrown, "INVALID_TRANSITION")).toBe(true);
    expect((thrown as Error).message).toContain(`'${from}'`);
    expect((thrown as Error).message).toContain(`'${to}'`);
    expect(readRaw(stateDir, "r1")).toBe(fileBefore);
    expect(tracker.get("r1")).toEqual(indexBefore);
    expect(fs.readdirSync(`${stateDir}/requests`)).toEqual(["r1.json"]);
  });
});
