import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readMarkedLines, type LineMarks, type ReadPoint } from "../../lib/telemetry/agentFiles/readLines";
import { tempParent } from "../helpers/stateDir";

// The usage ledger's reader of an agent's file (lib/telemetry/agentFiles/readLines.ts): only the lines
// its marks pick, each with where it starts, on real files; bounded as readLines is.

const BOUNDS = { maxLineBytes: 100, maxReadBytes: 1000 };

function readAll(file: string, marks: LineMarks, from: ReadPoint = { offset: 0, skipping: false }) {
  const fd = fs.openSync(file, "r");
  try {
    const size = fs.fstatSync(fd).size;
    const found: { at: number; text: string }[] = [];
    let point = from;
    let oversized = 0;
    for (;;) {
      const read = readMarkedLines(fd, point, size, marks, BOUNDS);
      found.push(...read.lines);
      oversized += read.oversized;
      const moved = read.offset !== point.offset || read.skipping !== point.skipping;
      point = { offset: read.offset, skipping: read.skipping };
      if (read.atEnd || !moved) return { found, oversized, point };
    }
  } finally {
    fs.closeSync(fd);
  }
}

describe("readMarkedLines", () => {
  it("keeps the whole lines holding a mark, with where each starts, and leaves a line still being written for the next read", () => {
    const file = path.join(tempParent(), "a.jsonl");
    fs.writeFileSync(file, '{"type":"user"}\n{"usage":{"input_tokens":1}}\n{"type":"user","text":"no"}\n{"usage":{"input_tokens":2}}\n{"usage":{"inp');
    const marks = { anywhere: [Buffer.from('"usage":{')] };
    const first = readAll(file, marks);
    expect(first.found).toEqual([
      { at: 16, text: '{"usage":{"input_tokens":1}}' },
      { at: 73, text: '{"usage":{"input_tokens":2}}' },
    ]);
    expect(first.point.offset).toBe(102);
    fs.appendFileSync(file, 'ut_tokens":3}}\n');
    expect(readAll(file, marks, first.point).found).toEqual([{ at: 102, text: '{"usage":{"input_tokens":3}}' }]);
  });

  it("keeps a line only for its whole mark, not one starting as it does, nor one read before into the same buffer", () => {
    const big = path.join(tempParent(), "big.jsonl");
    fs.writeFileSync(big, `${'{"usage":{"input_tokens":9}}\n'.repeat(20)}`);
    const file = path.join(tempParent(), "d.jsonl");
    fs.writeFileSync(file, '{"usage":"none"}\n{"usage"\n:{}}\n{"a":1,"usage":{"input_tokens":1}}\n{"usage":');
    const marks = { anywhere: [Buffer.from('"usage":{')] };
    expect(readAll(big, marks).found).toHaveLength(20);
    expect(readAll(file, marks).found).toEqual([{ at: 31, text: '{"a":1,"usage":{"input_tokens":1}}' }]);
  });

  it("keeps a line for its whole mark, not for one ending as it does, a mark at the file's first byte or one shorter than the bytes looked for", () => {
    const file = path.join(tempParent(), "e.jsonl");
    fs.writeFileSync(file, '"usage":{}\n{"page":{"n":1}}\n{"message":{"usage":{"input_tokens":1}}}\n{"ok":1}\n');
    expect(readAll(file, { anywhere: [Buffer.from('"usage":{')] }).found.map((line) => line.at)).toEqual([0, 28]);
    expect(readAll(file, { anywhere: [Buffer.from('"ok"')] }).found).toEqual([{ at: 69, text: '{"ok":1}' }]);
  });

  it("looks for a mark at a line's start only in its first bytes", () => {
    const file = path.join(tempParent(), "b.jsonl");
    fs.writeFileSync(file, `{"type":"token_count"}\n{"text":"${"x".repeat(40)}","type":"token_count"}\n`);
    expect(readAll(file, { atStart: [Buffer.from('"type":"token_count"')], startBytes: 30 }).found.map((line) => line.at)).toEqual([0]);
  });

  it("skips a line past the bound and counts it, however many reads it spans, and reads on after it", () => {
    const file = path.join(tempParent(), "c.jsonl");
    fs.writeFileSync(file, `{"usage":{"a":1}}\n{"usage":{"text":"${"y".repeat(5000)}"}}\n{"usage":{"b":2}}\n`);
    const read = readAll(file, { anywhere: [Buffer.from('"usage":{')] });
    expect(read.found.map((line) => line.text)).toEqual(['{"usage":{"a":1}}', '{"usage":{"b":2}}']);
    expect(read.oversized).toBe(1);
    expect(read.point.offset).toBe(fs.statSync(file).size);
  });
});
