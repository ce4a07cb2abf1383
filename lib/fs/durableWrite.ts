import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** Our temp files: hidden, named after the target and the writing pid, ending in `.tmp`. */
export const OWN_TEMP_PATTERN = /^\.[A-Za-z0-9_-]+\.json\.(\d+)\.[0-9a-f]{8}\.tmp$/;

// Unique per process (random prefix) and per write (counter), without a call into the random source each time.
const processTag = randomBytes(3).toString("hex");
let written = 0;

export interface TempFile {
  path: string;
  /** The temp's stat; a rename keeps its inode, size and mtime, so it is the target's once in place. */
  stat: fs.Stats;
}

/**
 * Write `data` to a new temp file beside `file` (opened with O_EXCL, so nothing planted there is
 * followed), and fsync it unless `fsync: false`. Nothing is visible at `file` until the rename.
 */
export function writeTempFile(file: string, data: string | Uint8Array, options: { fsync?: boolean } = {}): TempFile {
  const buffer = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  written = (written + 1) % 0x100;
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${processTag}${written.toString(16).padStart(2, "0")}.tmp`);
  const fd = fs.openSync(temp, "wx", 0o644);
  try {
    let offset = 0;
    while (offset < buffer.length) offset += fs.writeSync(fd, buffer, offset, buffer.length - offset);
    if (options.fsync ?? true) fs.fsyncSync(fd);
    return { path: temp, stat: fs.fstatSync(fd) };
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // Closed in the catch above.
    }
  }
}

/**
 * Replace `file` so that a crash at any instant leaves either the old content or the new, never a
 * torn file: temp file in the same folder, fsync, rename over the target (a rename replaces a
 * symlink rather than following it), fsync the folder. `fsync: false` keeps the atomicity (a killed
 * process leaves the old or the new file) but not the durability across a power cut: only for
 * files whose loss costs a re-run, never data (result markers). Returns the new file's stat.
 */
export function writeFileDurable(file: string, data: string | Uint8Array, options: { fsync?: boolean } = {}): fs.Stats {
  const temp = writeTempFile(file, data, options);
  try {
    fs.renameSync(temp.path, file);
  } catch (error) {
    fs.rmSync(temp.path, { force: true });
    throw error;
  }
  if (options.fsync ?? true) fsyncDir(path.dirname(file));
  return temp.stat;
}

/** Make a rename or unlink in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
