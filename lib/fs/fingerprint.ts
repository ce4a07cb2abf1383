import type fs from "node:fs";

/** A file as a stat sees it: a rename puts a new inode in place, a rewrite changes size or mtime. */
export interface FileFingerprint {
  mtimeMs: number;
  size: number;
  ino: number;
}

export function fingerprintOf(stat: fs.Stats): FileFingerprint {
  return { mtimeMs: stat.mtimeMs, size: stat.size, ino: stat.ino };
}

/** The same file as far as a stat can tell: same inode, size and modification time. */
export function sameFingerprint(a: FileFingerprint, b: FileFingerprint): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}
