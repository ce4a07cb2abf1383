import fs from "node:fs";

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

/** Whether `file` is still the file seen (`null`: seen missing, and still missing). */
export function isSameFile(file: string, seen: FileFingerprint | null): boolean {
  let now: FileFingerprint | null;
  try {
    now = fingerprintOf(fs.lstatSync(file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    now = null;
  }
  if (!now || !seen) return now === seen;
  return sameFingerprint(now, seen);
}
