import { describe, expect, it } from "vitest";
import { jsonStructureProblem } from "../../lib/model/jsonStructure";
import { aTracker } from "../helpers/stateDir";

describe("jsonStructureProblem", () => {
  it("accepts ordinary documents, whatever their strings hold", () => {
    const ok = [
      '{"a": 1, "b": {"a": 2, "b": [{"a": 3}, {"a": 4}]}}',
      '{"text": "a \\"quoted\\" {brace} [bracket], comma", "b": "\\\\", "c": "\\\\\\"", "d": 1}',
      '{"a": "x", "ab": "y", "b": "a"}',
      "[]",
      '{"": 1, " ": 2}',
      JSON.stringify({ nested: Array.from({ length: 10 }, (_, i) => ({ i, same: "keys" })) }, null, 2),
    ];
    for (const text of ok) expect(jsonStructureProblem(text), text).toBeNull();
  });

  it("finds a key given twice in one object, however it is spelled", () => {
    expect(jsonStructureProblem('{"state": "queued", "state": "completed"}')).toBe('duplicate key "state"');
    expect(jsonStructureProblem('{"a": {"x": 1, "y": 2, "x": 3}}')).toBe('duplicate key "x"');
    expect(jsonStructureProblem('[{"k": 1}, {"k": 2, "k": 3}]')).toBe('duplicate key "k"');
    // The same key, once escaped: JSON.parse sees one key.
    expect(jsonStructureProblem('{"state": 1, "st\\u0061te": 2}')).toMatch(/^duplicate key/);
    expect(jsonStructureProblem('{"st\\u0061te": 1, "state": 2}')).toMatch(/^duplicate key/);
  });

  it("refuses nesting deeper than the limit, and no deeper", () => {
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    expect(jsonStructureProblem(nested(64))).toBeNull();
    expect(jsonStructureProblem(nested(65))).toBe("nested more than 64 levels deep");
    expect(jsonStructureProblem(`{"a": ${nested(10_000)}}`)).toBe("nested more than 64 levels deep");
  });
});

describe("what the reader refuses is never written", () => {
  it("a field nested deeper than the limit is refused on create and update, and nothing is written", () => {
    const tracker = aTracker();
    let deep: unknown = "bottom";
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(() => tracker.create({ requestId: "deep", workspace: "w", extra: deep } as never)).toThrow(/nested more than 64 levels deep/);
    expect(tracker.get("deep")).toBeNull();
    tracker.create({ requestId: "ok", workspace: "w" });
    expect(() => tracker.update("ok", { fields: { extra: deep } as never })).toThrow(/Invalid request fields/);
    expect(tracker.get("ok")?.version).toBe(1);
  });
});
