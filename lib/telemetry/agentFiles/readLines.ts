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

export interface LinesRead extends ReadPoint {
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
