import fs from "node:fs";

/** Where a file is read from: the offset past the last whole line read, and whether that is inside a line too long to keep. */
export interface ReadPoint {
  offset: number;
  skipping: boolean;
}

export interface LineBounds {
  /** A line longer than this is skipped (read through to its end, never held whole) and counted. */
  maxLineBytes: number;
  /** Read at most this much in one go: a big file is read in several, each kept before the next. */
  maxReadBytes: number;
}

export const LINE_BOUNDS: LineBounds = { maxLineBytes: 8 * 1024 * 1024, maxReadBytes: 16 * 1024 * 1024 };

/** How much is read at once. */
const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;
/**
 * How many of a mark's last bytes are looked for: Node's Buffer#indexOf searches a needle under 8
 * bytes twice as fast as a longer one (Boyer-Moore-Horspool's), stopping at each byte equal to its
 * first; a JSON mark's last bytes start within its key, a letter rarer in the files than the quote
 * that starts it (`ge":{` of `"usage":{` is found in Claude Code's files in less than half the time `"usage"` is).
 */
const MARK_TAIL = 5;

interface LinesRead extends ReadPoint {
  /** The whole lines read, without their newline. */
  lines: string[];
  /** Lines skipped for their length (counted when they pass the bound). */
  oversized: number;
  /** False when `maxReadBytes` stopped the read before the file's end: read again. */
  atEnd: boolean;
  /** The most bytes of one line held at once: never much past `maxLineBytes`, however long the line. */
  held: number;
}

/**
 * The whole lines a file holds past `from`, read from an open descriptor up to `size` (the file's
 * size when it was looked at): only the bytes added since the last read. A last line without its
 * newline (being written) is left for the next read, which starts at it; a line past the bound is
 * skipped to its newline, whatever its length, holding at most a chunk of it.
 */
export function readLines(fd: number, from: ReadPoint, size: number, bounds: LineBounds = LINE_BOUNDS): LinesRead {
  const lines: string[] = [];
  let { offset, skipping } = from;
  let oversized = 0;
  let held = 0;
  // The line being read: its pieces so far (it began at `offset`).
  let pieces: Buffer[] = [];
  let pending = 0;
  let position = offset;
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  // Never less than a line's bound past the start: each read ends a line, or finds it too long.
  const stopAt = Math.min(size, offset + Math.max(bounds.maxReadBytes, bounds.maxLineBytes + 1));
  while (position < stopAt) {
    const read = fs.readSync(fd, buffer, 0, Math.min(CHUNK_BYTES, size - position), position);
    if (read === 0) break;
    let start = 0;
    while (start < read) {
      const newline = buffer.indexOf(NEWLINE, start);
      const end = newline === -1 || newline >= read ? read : newline;
      if (skipping) {
        if (end < read) skipping = false;
      } else if (pending + (end - start) > bounds.maxLineBytes) {
        // Past the bound: what was gathered goes, and the rest of the line is skipped as it is read.
        [pieces, pending, skipping] = [[], 0, end === read];
        oversized++;
      } else {
        pieces.push(Buffer.from(buffer.subarray(start, end)));
        pending += end - start;
        held = Math.max(held, pending);
        if (end < read) {
          lines.push(Buffer.concat(pieces, pending).toString("utf8"));
          [pieces, pending] = [[], 0];
        }
      }
      if (end < read) offset = position + end + 1;
      else if (skipping) offset = position + read;
      start = end + 1;
    }
    position += read;
  }
  return { lines, offset, skipping, oversized, atEnd: position >= size, held };
}

/** The lines `readMarkedLines` kept: each with where it starts in the file. */
interface MarkedLinesRead extends ReadPoint {
  lines: { at: number; text: string }[];
  /** Lines skipped for their length. */
  oversized: number;
  atEnd: boolean;
}

/** What a kept line holds: one of `anywhere` (searched over all that was read), or one of `atStart` within its first `startBytes`. */
export interface LineMarks {
  anywhere?: readonly Buffer[];
  atStart?: readonly Buffer[];
  startBytes?: number;
}

/** One buffer for every read: a first report reads thousands of files. */
let shared = Buffer.alloc(0);

/**
 * `readLines` for a reader that needs few of a file's lines: only the whole lines its marks pick (a
 * byte search, before anything is decoded), each decoded where it is; every other line is passed
 * over. A mark searched `anywhere` is found in one pass over what was read (as ccusage's); one
 * `atStart` is looked for at each line's start (a type a line's writer puts first). Same bounds as
 * `readLines`: a line past `maxLineBytes` is skipped and counted, a last line without its newline is
 * left for the next read.
 */
export function readMarkedLines(fd: number, from: ReadPoint, size: number, marks: LineMarks, bounds: LineBounds = LINE_BOUNDS): MarkedLinesRead {
  const lines: MarkedLinesRead["lines"] = [];
  let { offset, skipping } = from;
  let oversized = 0;
  const window = Math.max(bounds.maxLineBytes + 1, Math.min(bounds.maxReadBytes, 4 * CHUNK_BYTES));
  if (shared.length < Math.min(window, size - offset)) shared = Buffer.allocUnsafe(Math.min(window, Math.max(CHUNK_BYTES, size - offset)));
  const buffer = shared;
  const stopAt = Math.min(size, offset + Math.max(bounds.maxReadBytes, window));
  const keepLine = (start: number, end: number) => {
    if (end - start > bounds.maxLineBytes) oversized++;
    else lines.push({ at: offset + start, text: buffer.toString("utf8", start, end) });
  };
  while (offset < stopAt) {
    const read = fs.readSync(fd, buffer, 0, Math.min(buffer.length, window, size - offset), offset);
    if (read === 0) break;
    if (skipping) {
      const newline = buffer.indexOf(NEWLINE);
      if (newline === -1 || newline >= read) {
        offset += read;
        continue;
      }
      [offset, skipping] = [offset + newline + 1, false];
      continue;
    }
    const last = buffer.lastIndexOf(NEWLINE, read - 1);
    if (last === -1) {
      // No newline in a whole window: a line past the bound, skipped to its end; at the file's end, a line still being written.
      if (offset + read >= size && read <= bounds.maxLineBytes) break;
      [offset, skipping] = [offset + read, true];
      oversized++;
      continue;
    }
    const hits: number[] = [];
    // Searched only over the whole lines read (the buffer past them holds an earlier read's bytes).
    const whole = buffer.subarray(0, last);
    for (const mark of marks.anywhere ?? []) {
      // The mark's last bytes are looked for, the bytes before them compared where they are.
      const before = Math.max(0, mark.length - MARK_TAIL);
      const tail = mark.subarray(before);
      for (let found = whole.indexOf(tail, before); found !== -1; found = whole.indexOf(tail, found + 1)) {
        const hit = found - before;
        let same = true;
        for (let i = 0; same && i < before; i++) same = whole[hit + i] === mark[i];
        if (same) hits.push(hit);
      }
    }
    hits.sort((a, b) => a - b);
    let lineEnd = -1;
    for (const hit of hits) {
      if (hit < lineEnd) continue;
      const start = buffer.lastIndexOf(NEWLINE, hit) + 1;
      lineEnd = buffer.indexOf(NEWLINE, hit);
      keepLine(start, lineEnd);
    }
    if (marks.atStart?.length) {
      const head = marks.startBytes ?? 256;
      for (let start = 0; start <= last;) {
        const end = buffer.indexOf(NEWLINE, start);
        const begins = buffer.subarray(start, Math.min(end, start + head));
        if (marks.atStart.some((mark) => begins.includes(mark)) && !hits.some((hit) => hit >= start && hit < end)) keepLine(start, end);
        start = end + 1;
      }
      if (hits.length > 0) lines.sort((a, b) => a.at - b.at);
    }
    offset += last + 1;
  }
  return { lines, offset, skipping, oversized, atEnd: offset >= size };
}
