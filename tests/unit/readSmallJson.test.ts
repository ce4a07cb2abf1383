import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { jsonObject, readSmallJson } from "../../lib/fs/readSmallJson";
import { tempParent } from "../helpers/stateDir";

describe("the one reader of small JSON files", () => {
  const options = {
    maxBytes: 64,
    links: "refuse" as const,
    shape: (json: unknown) => (typeof jsonObject(json)?.pid === "number" ? (json as { pid: number }) : undefined),
  };
  const fileHolding = (text: string) => {
    const file = path.join(tempParent(), "small.json");
    fs.writeFileSync(file, text);
    return file;
  };

  it("reads the value a file holds, past a byte-order mark", () => {
    expect(readSmallJson(fileHolding('\uFEFF{"pid": 42}'), options)).toMatchObject({ value: { pid: 42 } });
  });

  it("says why a file is not read, in words that follow its name, and which kind of problem it is", () => {
    const at = (text: string) => {
      const read = readSmallJson(fileHolding(text), options);
      return "problem" in read ? { reason: read.reason, problem: read.problem } : read;
    };
    expect(at(" \n")).toEqual({ reason: "empty", problem: "is empty" });
    expect(at('{\n  "pid": 4,,\n}')).toEqual({ reason: "not json", problem: "is not JSON (line 2, column 12)" });
    expect(at('{"pid": "4"}')).toEqual({ reason: "wrong shape", problem: "does not hold what it should" });
    expect(at(`{"pid": 4, "pad": "${"x".repeat(64)}"}`)).toMatchObject({ reason: "too big" });
    expect(readSmallJson(path.join(tempParent(), "none.json"), options)).toEqual({ missing: true });
  });

  it("looks into a plain object only: null, an array or a scalar is not one", () => {
    for (const value of [null, undefined, [], [{ pid: 1 }], "{}", 42, true]) expect(jsonObject(value)).toBeUndefined();
    const value = { pid: 42, nested: [null] };
    expect(jsonObject(value)).toBe(value);
    expect(jsonObject({})).toEqual({});
  });
});
