import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** Our temp files: hidden, named after the target and the writing pid, ending in `.tmp`. */
export const OWN_TEMP_PATTERN = /^\.[A-Za-z0-9_-]+\.json\.(\d+)\.[0-9a-f]{8}\.tmp$/;

function tempPathFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
}

/**
 * Replace `file` so that a crash at any instant leaves either the old content or the new, never a
 * torn file: write a temp file in the same folder, fsync it, rename it over the target, fsync the
 * folder. The temp is opened with O_EXCL, and rename replaces a symlink rather than following it,
 * so a link planted in the folder cannot redirect the write elsewhere. `fsync: false` keeps the
 * atomicity (a killed process leaves the old or the new file) but not the durability across a
 * power cut; only for files whose loss costs a re-run, never data (result markers). Returns the new file's
 * stat (from the open descriptor, so no second lookup by path).
 */
export function writeFileDurable(file: string, data: string | Uint8Array, options: { fsync?: boolean } = {}): fs.Stats {
  const sync = options.fsync ?? true;
  const buffer = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const temp = tempPathFor(file);
  const fd = fs.openSync(temp, "wx", 0o644);
  let stat: fs.Stats;
  try {
    try {
      let offset = 0;
      while (offset < buffer.length) offset += fs.writeSync(fd, buffer, offset, buffer.length - offset);
      if (sync) fs.fsyncSync(fd);
      // A rename keeps the inode, size and mtime, so this is the stat of the file once it is in place.
      stat = fs.fstatSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  if (sync) fsyncDir(path.dirname(file));
  return stat;
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
