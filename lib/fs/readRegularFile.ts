import fs from "node:fs";

/** A small file another program (or a path someone else chose) names, read; or why it was not, in words. */
export type RegularFileRead = { text: string } | { missing: true } | { problem: string; reason: "not regular" | "too big" | "unreadable" };

// Windows has neither flag; the stat before the open is its only guard there.
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0);

/** What a path that is not a regular file is, as a person says it. */
function kindOf(stat: fs.Stats): string {
  if (stat.isFIFO()) return "a FIFO (a named pipe)";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isDirectory()) return "a folder";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}

function notRegular(stat: fs.Stats): RegularFileRead {
  const kind = kindOf(stat);
  return { problem: kind === "not a regular file" ? "is not a regular file" : `is ${kind}, not a regular file`, reason: "not regular" };
}

function cannotRead(error: unknown): RegularFileRead {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return { missing: true };
  return { problem: `cannot be read (${code === "EACCES" ? "permission denied" : (code ?? (error as Error).message)})`, reason: "unreadable" };
}

/**
 * Read a file whose path reqwatch did not choose, as UTF-8, only if it is a regular file of at most
 * `maxBytes` (symlinks are followed to what they name). A FIFO would block the one thread that
 * serves every page, and a device would be read until memory runs out: neither is opened to read.
 * The stat before the open keeps devices closed; the open does not wait for a FIFO's writer, and the
 * fstat after it checks what was opened, in case the path was swapped in between.
 */
export function readRegularFile(file: string, maxBytes: number): RegularFileRead {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    return cannotRead(error);
  }
  if (!stat.isFile()) return notRegular(stat);
  let fd: number;
  try {
    fd = fs.openSync(file, OPEN_FLAGS);
  } catch (error) {
    return cannotRead(error);
  }
  try {
    const opened = fs.fstatSync(fd);
    if (!opened.isFile()) return notRegular(opened);
    const tooBig: RegularFileRead = { problem: `is larger than ${maxBytes} bytes`, reason: "too big" };
    if (opened.size > maxBytes) return tooBig;
    // Room for one byte more than allowed: a file that grew since the fstat is caught too.
    const buffer = Buffer.allocUnsafe(maxBytes + 1);
    let length = 0;
    for (;;) {
      const read = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) return { text: buffer.toString("utf8", 0, length) };
      length += read;
      if (length > maxBytes) return tooBig;
    }
  } catch (error) {
    return cannotRead(error);
  } finally {
    fs.closeSync(fd);
  }
}
