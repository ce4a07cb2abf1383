import { describe, expect, it } from "vitest";
import { aRecording } from "../helpers/stateDir";
import { parseRequestQuery, toListFilters } from "../../lib/model/requestQuery";

describe("filters by prefix, and the values they suggest", () => {
  it("lists the workspaces and sessions that start with what is typed, each once, in order, up to the limit", () => {
    const { tracker, reader } = aRecording();
    for (const [workspace, sessionId, n] of [
      ["batch", "s-alpha", 30],
      ["batch-nightly", "s-beta", 2],
      ["bat_x", undefined, 1],
      ["chat", "s-alpha", 2],
    ] as const) {
      for (let i = 0; i < n; i++) tracker.create({ workspace, ...(sessionId && { sessionId }), state: "queued" });
    }
    expect(reader.knownValues("workspace", "bat")).toEqual(["bat_x", "batch", "batch-nightly"]);
    expect(reader.knownValues("workspace", "")).toEqual(["bat_x", "batch", "batch-nightly", "chat"]);
    expect(reader.knownValues("workspace", "bat", 2)).toEqual(["bat_x", "batch"]);
    expect(reader.knownValues("workspace", "x")).toEqual([]);
    expect(reader.knownValues("session", "s-")).toEqual(["s-alpha", "s-beta"]);

    expect(tracker.list({ workspacePrefix: "batch", limit: 100 }).items).toHaveLength(32);
    // "_" is a character here, not a wildcard; the exact filter stays exact.
    expect(tracker.list({ workspacePrefix: "bat_" }).items.map((row) => row.workspace)).toEqual(["bat_x"]);
    expect(tracker.list({ workspace: "batch", limit: 100 }).items).toHaveLength(30);
    expect(tracker.list({ sessionPrefix: "s-b" }).items.map((row) => row.workspace)).toEqual(["batch-nightly", "batch-nightly"]);
  });

  it("the table's URL keeps a link's workspace and session exact, and what was typed a prefix", () => {
    expect(toListFilters(parseRequestQuery(new URLSearchParams("workspacePrefix=bat&sessionPrefix=s-al")), Date.now(), [])).toMatchObject({
      workspacePrefix: "bat",
      sessionPrefix: "s-al",
    });
    const exact = toListFilters(parseRequestQuery(new URLSearchParams("workspace=batch&session=s1")), Date.now(), []);
    expect(exact).toMatchObject({ workspace: "batch", sessionId: "s1" });
    expect(exact.workspacePrefix).toBeUndefined();
  });
});
