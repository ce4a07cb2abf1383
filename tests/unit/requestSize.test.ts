import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { aRecording } from "../helpers/stateDir";

describe("a request too big for its file", () => {
  it("is refused before anything is written, so no request becomes one no reader can read back", () => {
    const { tracker, reader } = aRecording();
    const created = tracker.create({ requestId: "kept", workspace: "w", state: "queued" });
    const huge = "x".repeat(65 * 1024 * 1024);
    expect(() => tracker.create({ requestId: "huge", workspace: "w", prompt: huge })).toThrow(
      /would be 65\.0 MB written out; reqwatch keeps a request file up to 64 MB\. Nothing was written/,
    );
    expect(fs.existsSync(reader.stateDir.requestFile("huge"))).toBe(false);
    expect(() => tracker.update("kept", { fields: { output: huge } })).toThrow(/Nothing was written/);
    expect(tracker.get("kept")).toMatchObject({ version: created.version, state: "queued" });
    expect(tracker.get("kept")?.output).toBeUndefined();
  });
});
